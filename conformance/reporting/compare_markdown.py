"""A comparison as GitHub Markdown: the table of runs, the diff of two."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from conformance.reporting.compare import Diff, Row, Run, displayed
from conformance.reporting.compare_text import (
    FOLLOWS_KEY,
    TABLE_KEY,
    move_cells,
    move_word,
    setup_of,
    status_word,
    summary,
    verdict_of,
)
from conformance.reporting.escape import markdown_text


def _table(header: Sequence[str], body: Iterable[Sequence[str]]) -> list[str]:
    rows = [header, ["---"] * len(header), *body]
    return ["| " + " | ".join(row) + " |" for row in rows]


def _runs(runs: Sequence[Run]) -> list[str]:
    return [
        f"{n}. **{markdown_text(run.label)}**: verdict {markdown_text(verdict_of(run))}; "
        f"{markdown_text(setup_of(run))}"
        + ("" if run.absent else f"; file {markdown_text(run.path.name)}")
        for n, run in enumerate(runs, 1)
    ]


def _status(level: str, status: str, follows: bool = False) -> str:
    text = markdown_text(status_word(level, status, follows))
    return f"**{text}**" if status == "FAIL" and level == "MUST" and not follows else text


def render_markdown(runs: Sequence[Run], rows: Sequence[Row]) -> str:
    header = ["Requirement", "Level", *(markdown_text(run.label) for run in runs)]
    body = [
        [
            markdown_text(row.id),
            markdown_text(row.level),
            *(_status(row.level, c, f) for c, f in zip(row.cells, row.follows, strict=True)),
        ]
        for row in rows
    ]
    footer = ["**Verdict**", "", *(f"**{markdown_text(verdict_of(run))}**" for run in runs)]
    out = ["**Runs**", "", *_runs(runs), "", *_table(header, [*body, footer])]
    key = f"{TABLE_KEY}; {FOLLOWS_KEY}"
    return "\n".join([*out, "", f"_{markdown_text(key)}_"]) + "\n"


def render_diff_markdown(d: Diff) -> str:
    out = [f"**A**: {markdown_text(d.a.label)} ({markdown_text(d.a.path.name)})  "]
    out.append(f"**B**: {markdown_text(d.b.label)} ({markdown_text(d.b.path.name)})")
    if d.notes:
        out += ["", *(f"> Note: {markdown_text(note)}  " for note in d.notes)]
    out += ["", f"#### Status changes ({len(d.changes)})", ""]
    if d.changes:
        out += _table(
            ["Requirement", "Level", "A", "B", "Change"],
            (
                [
                    markdown_text(c.id),
                    markdown_text(c.level),
                    markdown_text(displayed(c.before)),
                    markdown_text(displayed(c.after)),
                    c.kind,
                ]
                for c in d.changes
            ),
        )
    out += ["", f"#### Measurements moved by more than their limit ({len(d.moves)})", ""]
    if d.moves:
        out += _table(
            ["Requirement", "Level", "A", "B", "Moved", "Allowed", "Change"],
            (
                [markdown_text(m.id), markdown_text(m.level), *move_cells(m), move_word(m)]
                for m in d.moves
            ),
        )
    for name, ids in (("A", d.only_in_a), ("B", d.only_in_b)):
        if ids:
            out += ["", f"Only in {name}: " + ", ".join(markdown_text(i) for i in ids)]
    out += ["", f"**{markdown_text(summary(d))}**"]
    return "\n".join(out) + "\n"
