"""A comparison as aligned plain text for a terminal: the table of runs, the diff of two."""

from __future__ import annotations

from collections.abc import Sequence

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
from conformance.reporting.escape import terminal_text


def _align(table: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return [
        indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]


def render_terminal(runs: Sequence[Run], rows: Sequence[Row], width: int = 100) -> str:
    """Aligned columns headed by the run labels; numbered, with a legend, when too wide."""
    labels = [terminal_text(run.label) for run in runs]

    def lines(headers: Sequence[str]) -> list[str]:
        body = [
            [
                terminal_text(row.id),
                terminal_text(row.level),
                *(
                    terminal_text(status_word("", c, f))
                    for c, f in zip(row.cells, row.follows, strict=True)
                ),
            ]
            for row in rows
        ]
        footer = ["verdict", "", *(terminal_text(verdict_of(run)) for run in runs)]
        table = [["requirement", "level", *headers], *body, footer]
        aligned = _align(table)
        rule = "-" * max(len(line) for line in aligned)
        return [aligned[0], rule, *aligned[1:-1], rule, aligned[-1]]

    out = lines(labels)
    if max(len(line) for line in out) > width:
        legend = [
            [f"[{n}]", label, terminal_text(run.path), terminal_text(setup_of(run))]
            for n, (label, run) in enumerate(zip(labels, runs, strict=True), 1)
        ]
        out = [*_align(legend), "", *lines([f"[{n}]" for n in range(1, len(runs) + 1)])]
    return "\n".join([*out, "", TABLE_KEY, FOLLOWS_KEY]) + "\n"


def render_diff_terminal(d: Diff) -> str:
    out = [
        f"A: {terminal_text(d.a.label)}  ({terminal_text(d.a.path)})",
        f"B: {terminal_text(d.b.label)}  ({terminal_text(d.b.path)})",
    ]
    out += [f"note: {terminal_text(note)}" for note in d.notes]
    out += ["", f"Status changes ({len(d.changes)}):"]
    out += _align(
        [
            [
                c.kind,
                terminal_text(c.level),
                terminal_text(c.id),
                terminal_text(f"{displayed(c.before)} -> {displayed(c.after)}"),
            ]
            for c in d.changes
        ]
        or [["none"]],
        indent="  ",
    )
    out += ["", f"Measurements moved by more than their limit ({len(d.moves)}):"]
    out += _align(
        [
            [
                move_word(m),
                terminal_text(m.level),
                terminal_text(m.id),
                "{} -> {}".format(*move_cells(m)[:2]),
                "(moved {2}, allowed {3})".format(*move_cells(m)),
            ]
            for m in d.moves
        ]
        or [["none"]],
        indent="  ",
    )
    for name, ids in (("A", d.only_in_a), ("B", d.only_in_b)):
        if ids:
            out += ["", f"Only in {name} ({len(ids)}): " + ", ".join(terminal_text(i) for i in ids)]
    out += ["", terminal_text(summary(d))]
    return "\n".join(out) + "\n"
