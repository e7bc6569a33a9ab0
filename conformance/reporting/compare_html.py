"""A comparison as one self-contained HTML page: the table of runs, the diff of two. No
scripts, no network: the page's CSP forbids both, its stylesheet (compare.css) is inlined."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from conformance.checks.result import format_value
from conformance.reporting import style
from conformance.reporting.compare import MISSING, Diff, Row, Run, displayed, text_of
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
from conformance.reporting.escape import html_text
from conformance.reporting.results import RequirementResult

CSS = style.stylesheet("compare.css")


def _chip(level: str, status: str, title: str = "", follows: bool = False) -> str:
    css = style.shown(status, level).css if status != MISSING else "missing"
    tip = f' title="{html_text(title)}"' if title else ""
    word = html_text(status_word(level, status, follows))
    return f'<span class="chip {css}"{tip}>{word}</span>'


def _cell_title(entry: RequirementResult | None) -> str:
    """The reason, or what was measured against which limit, for a cell's tooltip."""
    if entry is None:
        return ""
    reason = text_of(entry.reason)
    if reason:
        return reason
    if entry.follows_from:
        return f"not measurable: follows from {', '.join(entry.follows_from)}"
    if entry.measured is None:
        return ""
    return f"measured {format_value(entry.measured)} vs {entry.limit}"


def _page(title: str, body: Sequence[str], css: str = "") -> str:
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html_text(title)}</title><style>\n{CSS}{css}</style></head><body>",
        f"<h1>{html_text(title)}</h1>",
    ]
    return "\n".join([*head, *body, "</body></html>"]) + "\n"


def _runs(runs: Sequence[Run], names: Sequence[str]) -> list[str]:
    rows = [
        f"<tr><td>{html_text(name)}</td><td>{html_text(run.label)}</td>"
        f"<td><code>{html_text(run.path.name)}</code></td>"
        f"<td>{html_text(setup_of(run))}</td><td>{_chip('MUST', verdict_of(run))}</td></tr>"
        for name, run in zip(names, runs, strict=True)
    ]
    header = "<tr><th></th><th>Run</th><th>File</th><th>Setup</th><th>Verdict</th></tr>"
    return ["<table>", f"<thead>{header}</thead>", "<tbody>", *rows, "</tbody></table>"]


def render_html(
    runs: Sequence[Run],
    rows: Sequence[Row],
    title: str = "",
    preface: Sequence[str] = (),
    appendix: Sequence[str] = (),
    css: str = "",
) -> str:
    """The page of the table of runs; ``preface`` and ``appendix`` are HTML the caller escaped,
    placed before and after the tables, ``css`` more rules for them.

    The grid scrolls inside a box of its own, its requirement names (with their levels) and
    its column heads (turned upright to keep columns narrow) sticky at the box's edges, so a
    wide table stays readable: whichever cell is in view, its row and column are named."""
    tables = [run.requirements() for run in runs]
    header = "".join(
        f'<th class="run" title="{html_text(f"{run.label}: {run.path}")}">'
        f"<span>{n}. {html_text(run.label)}</span></th>"
        for n, run in enumerate(runs, 1)
    )
    body = []
    for row in rows:
        cells = "".join(
            f"<td>{_chip(row.level, cell, _cell_title(table.get(row.id)), follow)}</td>"
            for cell, table, follow in zip(row.cells, tables, row.follows, strict=True)
        )
        body.append(
            f'<tr><th class="req" scope="row"><code>{html_text(row.id)}</code>'
            f'<span class="level">{html_text(row.level)}</span></th>{cells}</tr>'
        )
    verdicts = "".join(f"<td>{_chip('MUST', verdict_of(run))}</td>" for run in runs)
    return _page(
        title or f"Conformance of {len(runs)} run{'s' if len(runs) != 1 else ''}",
        [
            *preface,
            "<h2>Runs</h2>",
            *_runs(runs, [str(n) for n in range(1, len(runs) + 1)]),
            "<h2>Requirements</h2>",
            '<div class="grid"><table>',
            f'<thead><tr><th class="req">Requirement</th>{header}</tr></thead>',
            "<tbody>",
            *body,
            "</tbody>",
            f'<tfoot><tr><td class="req">verdict</td>{verdicts}</tr></tfoot></table></div>',
            f'<p class="note">{html_text(f"{TABLE_KEY}; {FOLLOWS_KEY}")}</p>',
            *appendix,
        ],
        css,
    )


def _table(header: Sequence[str], rows: Iterable[str]) -> list[str]:
    """A table of ``header`` over ``rows`` (each a <tr> the caller escaped)."""
    heads = "".join(f"<th>{name}</th>" for name in header)
    return [f"<table><thead><tr>{heads}</tr></thead><tbody>", *rows, "</tbody></table>"]


def render_diff_html(d: Diff) -> str:
    body = _runs([d.a, d.b], ["A", "B"])
    body += [f'<p class="note">Note: {html_text(note)}</p>' for note in d.notes]
    body.append(f"<h2>Status changes ({len(d.changes)})</h2>")
    if d.changes:
        body += _table(
            ["Requirement", "Level", "A", "B", "Change"],
            (
                f"<tr><td><code>{html_text(c.id)}</code></td><td>{html_text(c.level)}</td>"
                f"<td>{_chip(c.level, displayed(c.before))}</td>"
                f"<td>{_chip(c.level, displayed(c.after))}</td>"
                f'<td class="{c.kind}">{c.kind}</td></tr>'
                for c in d.changes
            ),
        )
    body.append(f"<h2>Measurements moved by more than their limit ({len(d.moves)})</h2>")
    if d.moves:
        body += _table(
            ["Requirement", "Level", "A", "B", "Moved", "Allowed", "Change"],
            (
                f"<tr><td><code>{html_text(m.id)}</code></td><td>{html_text(m.level)}</td>"
                + "".join(f"<td>{html_text(cell)}</td>" for cell in move_cells(m))
                + f'<td class="{"regression" if m.worse else "improvement"}">'
                f"{move_word(m)}</td></tr>"
                for m in d.moves
            ),
        )
    for name, ids in (("A", d.only_in_a), ("B", d.only_in_b)):
        if ids:
            codes = ", ".join(f"<code>{html_text(i)}</code>" for i in ids)
            body.append(f"<h2>Only in {name} ({len(ids)})</h2><p>{codes}</p>")
    css = "regression" if d.regressions else "improvement"
    body.append(f'<p class="{css}">{html_text(summary(d))}</p>')
    return _page("Conformance: A vs B", body)
