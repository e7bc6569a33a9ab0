"""Runs side by side: a requirement x run matrix of statuses, and the diff of two runs.

Reads results documents (results.json, ``results.schema.json``) only: no catalogue of this
version is consulted, so runs of other suite versions compare too. Loading checks just what
comparing uses; renderers are pure and return text (``compare_cli`` does the I/O). Every string
from a document is the server's or a user's: renderers neutralise it for their medium.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from conformance.checks.result import format_value
from conformance.reporting import style
from conformance.reporting.escape import html_text, markdown_text, terminal_text
from conformance.reporting.results import RequirementResult
from conformance.verdicts.status import Status

FORMAT = 1
MISSING = "—"  # the run has no such requirement (another catalogue)
LABEL_WIDTH = 48  # a server header is the server's to choose: keep it from swamping the page

# How well a server did on a requirement; N/A and NOT RUN judged nothing, so they have no rank.
# XFAIL sits above FAIL: a known failure does not fail the run. STALE (a known failure that
# passes now) ranks with PASS: the server passes, only the known-failures file is out of date.
RANK: dict[str, int] = {
    Status.FAIL: 0,
    Status.XFAIL: 1,
    Status.UNSUPPORTED: 2,
    Status.PASS: 3,
    Status.STALE: 3,
}
PASSING = frozenset({Status.PASS, Status.STALE})

Kind = Literal["regression", "improvement", "changed"]


@dataclass(frozen=True)
class Run:
    path: Path
    document: dict[str, Any]
    label: str
    absent: str = ""  # why this column has no results (e.g. its server did not start)

    def requirements(self) -> dict[str, RequirementResult]:
        """Its requirements by id, typed (the document's own, whatever its suite version)."""
        return {
            entry.id: entry
            for entry in map(RequirementResult.from_json, self.document["requirements"])
        }


@dataclass(frozen=True)
class Row:
    id: str
    level: str
    cells: tuple[str, ...]  # one displayed status per run, MISSING where the run lacks it


@dataclass(frozen=True)
class StatusChange:
    id: str
    level: str
    before: str
    after: str
    kind: Kind


@dataclass(frozen=True)
class Move:
    """A measurement that moved by more than the limit its check allows."""

    id: str
    level: str
    before: float
    after: float
    allowed: float

    @property
    def worse(self) -> bool:
        return self.after > self.before  # only "<= X" limits are compared: larger is worse


@dataclass(frozen=True)
class Diff:
    a: Run
    b: Run
    changes: tuple[StatusChange, ...]
    moves: tuple[Move, ...]
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    notes: tuple[str, ...]  # differences of setup that explain (or blur) the comparison

    @property
    def regressions(self) -> tuple[str, ...]:
        """Ids that got worse in B: a worse status, or a measurement moved the wrong way."""
        ids = [c.id for c in self.changes if c.kind == "regression"]
        ids += [m.id for m in self.moves if m.worse]
        return tuple(dict.fromkeys(ids))


# Loading


def _text(value: object) -> str | None:
    """A non-empty string with its whitespace collapsed, else None."""
    if not isinstance(value, str):
        return None
    return " ".join(value.split()) or None


def _section(document: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = document.get(key)
    return value if isinstance(value, dict) else {}


def _clip(text: str, width: int = LABEL_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _problem(document: object) -> str | None:
    """Why ``document`` is not a results document compare can read, or None."""
    if not isinstance(document, dict):
        return "not a results document (not a JSON object)"
    if document.get("format") != FORMAT:
        found = json.dumps(document.get("format"))
        return f'not a results document of format {FORMAT} ("format": {found})'
    requirements = document.get("requirements")
    if not isinstance(requirements, list):
        return 'not a results document (no "requirements" list)'
    seen: set[str] = set()
    for index, entry in enumerate(requirements):
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(key), str) for key in ("id", "level", "status")
        ):
            return f"requirements[{index}] lacks a string id, level or status"
        if entry["id"] in seen:
            return f"requirement {entry['id']!r} appears twice"
        seen.add(entry["id"])
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: cannot read: {error}") from error
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON: {error}") from error
    problem = _problem(document)
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    result: dict[str, Any] = document
    return result


def run_label(document: Mapping[str, Any], path: Path) -> str:
    """``<server header or first model> <version> (<model>)``, else the file name."""
    server = _section(document, "server")
    models = server.get("models")
    first_model = _text(models[0]) if isinstance(models, list) and models else None
    ident = _text(server.get("server_header")) or first_model
    model = _text(_section(document, "endpoint").get("model")) or first_model
    head = " ".join(part for part in (ident, _text(server.get("version"))) if part)
    if model and model != ident:
        head = f"{head} ({model})" if head else model
    return _clip(head) if head else path.name


def unique_labels(labels: Sequence[str], paths: Sequence[Path]) -> list[str]:
    """Labels that coincide get their file's stem (its folder too when the stems coincide, as
    for the results.json of several --report-dir folders), and a column number if that still
    ties."""
    counts, stems = Counter(labels), Counter(path.stem for path in paths)
    result = [
        label if counts[label] == 1 else f"{label} [{_file_tag(path, stems)}]"
        for label, path in zip(labels, paths, strict=True)
    ]
    counts = Counter(result)
    return [f"{label} #{n}" if counts[label] > 1 else label for n, label in enumerate(result, 1)]


def _file_tag(path: Path, stems: Counter[str]) -> str:
    return path.stem if stems[path.stem] == 1 else f"{path.parent.name}/{path.name}"


def load_runs(paths: Iterable[str | Path]) -> list[Run]:
    """The runs in ``paths``, labelled; ValueError naming the file that cannot be compared."""
    files = [Path(p) for p in paths]
    documents = [_read(file) for file in files]
    labels = unique_labels([run_label(d, f) for d, f in zip(documents, files, strict=True)], files)
    return [Run(f, d, label) for f, d, label in zip(files, documents, labels, strict=True)]


# The matrix


def requirement_order(runs: Sequence[Run]) -> list[str]:
    """Every id in catalogue order: each run's own order, with an id that only a later run has
    placed right after the id it follows there (so a newer catalogue's id stays in its area)."""
    order: list[str] = []
    for run in runs:
        previous: str | None = None
        for entry in run.document["requirements"]:
            requirement_id = entry["id"]
            if requirement_id not in order:
                position = 0 if previous is None else order.index(previous) + 1
                order.insert(position, requirement_id)
            previous = requirement_id
    return order


def displayed(status: str) -> str:
    return style.word(status)


def matrix(runs: Sequence[Run]) -> list[Row]:
    """One row per requirement of any run; a cell per run (N/A for SKIPPED, MISSING if absent)."""
    tables = [run.requirements() for run in runs]
    rows = []
    for requirement_id in requirement_order(runs):
        entries = [table.get(requirement_id) for table in tables]
        level = next(e.level for e in entries if e is not None)
        cells = tuple(MISSING if e is None else displayed(e.status) for e in entries)
        rows.append(Row(requirement_id, level, cells))
    return rows


# The diff


def change_kind(before: str, after: str) -> Kind:
    """Whether a status change is a regression, an improvement, or neither (e.g. deselected)."""
    if before in RANK and after in RANK:
        step = RANK[after] - RANK[before]
        return "regression" if step < 0 else "improvement" if step > 0 else "changed"
    if after == Status.FAIL or (before in PASSING and after == Status.SKIPPED):
        return "regression"  # a new failure, or a pass that is no longer checked
    return "improvement" if after in PASSING else "changed"


_AT_MOST = re.compile(r"\s*<=\s*(\S+)\s*")


def allowed_movement(limit: object) -> float | None:
    """X of a limit "<= X": a distance the check tolerates, hence also how far a measurement
    may move between runs. None for any other limit (counts, exact values, HTTP statuses)."""
    match = _AT_MOST.fullmatch(limit) if isinstance(limit, str) else None
    if match is None:
        return None
    try:
        value = float(match.group(1))
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def measurement_move(a: RequirementResult, b: RequirementResult) -> Move | None:
    """The move of one requirement's measurement from A to B, when it exceeds B's limit.

    Both limits must be "<= X": with another kind of limit on either side the two measurements
    need not be the same quantity."""
    allowed = allowed_movement(b.limit)
    before, after = _number(a.measured), _number(b.measured)
    if allowed is None or allowed_movement(a.limit) is None:
        return None
    if before is None or after is None or abs(after - before) <= allowed:
        return None
    return Move(b.id, b.level, before, after, allowed)


def _setup_notes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    notes = []
    suite_a, suite_b = _section(a, "suite"), _section(b, "suite")
    if suite_a.get("catalogue_sha256") != suite_b.get("catalogue_sha256"):
        notes.append(
            f"different requirement catalogues (suite {suite_a.get('version')} vs "
            f"{suite_b.get('version')}): a requirement may have changed meaning"
        )
    run_a, run_b = _section(a, "run"), _section(b, "run")
    if run_a.get("precision") != run_b.get("precision"):
        notes.append(f"different tiers: {run_a.get('precision')} vs {run_b.get('precision')}")
    limits_a, limits_b = _section(run_a, "tolerances"), _section(run_b, "tolerances")
    for key in sorted(set(limits_a) | set(limits_b)):
        if limits_a.get(key) != limits_b.get(key):
            notes.append(f"limit {key}: {limits_a.get(key)} vs {limits_b.get(key)}")
    for name, section in (("A", run_a), ("B", run_b)):
        selection = _section(section, "selection")
        if any(selection.get(k) for k in ("requirements", "keyword", "markers", "deselected")):
            notes.append(f"{name} is a partial run (-k, -m or --requirements): NOT RUN there")
    return notes


def diff(a: Run, b: Run) -> Diff:
    """What changed from run A to run B."""
    in_a, in_b = a.requirements(), b.requirements()
    order = requirement_order([a, b])
    common = [i for i in order if i in in_a and i in in_b]
    changes = tuple(
        StatusChange(
            i,
            in_b[i].level,
            in_a[i].status,
            in_b[i].status,
            change_kind(in_a[i].status, in_b[i].status),
        )
        for i in common
        if in_a[i].status != in_b[i].status
    )
    moves = tuple(m for i in common if (m := measurement_move(in_a[i], in_b[i])) is not None)
    return Diff(
        a,
        b,
        changes,
        moves,
        only_in_a=tuple(i for i in order if i not in in_b),
        only_in_b=tuple(i for i in order if i not in in_a),
        notes=tuple(_setup_notes(a.document, b.document)),
    )


# Shared by the renderers


def _verdict(run: Run) -> str:
    if run.absent:
        return "NO RESULTS"
    verdict = run.document.get("verdict")
    return verdict if isinstance(verdict, str) else "?"


def _details(run: Run) -> str:
    """Suite version, tier, profile and reference of a run, for the legend."""
    if run.absent:
        return run.absent
    suite, setup = _section(run.document, "suite"), _section(run.document, "run")
    reference = _section(run.document, "reference")
    parts = [
        f"suite {suite.get('version')}",
        f"{setup.get('precision')}",
        f"profile {setup.get('profile')}",
        f"reference {_text(reference.get('name')) or reference.get('kind')}",
    ]
    return ", ".join(str(part) for part in parts)


def _status_word(level: str, status: str) -> str:
    return f"{status} (warning)" if style.is_warning(status, level) else status


def _move_cells(m: Move) -> tuple[str, str, str, str]:
    """Before, after, how far it moved, how far it may: as every renderer shows a move."""
    return (
        format_value(m.before),
        format_value(m.after),
        f"{abs(m.after - m.before):.3g}",
        f"{m.allowed:g}",
    )


def _move_word(m: Move) -> str:
    return "worse" if m.worse else "better"


NOTE = "N/A: not applicable; —: not in that run; FAIL of a SHOULD: a warning"


def _summary(d: Diff) -> str:
    regressions = d.regressions
    if not regressions:
        return "No regressions."
    plural = "s" if len(regressions) > 1 else ""
    return f"{len(regressions)} regression{plural}: " + ", ".join(regressions)


# Terminal


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
        body = [[terminal_text(row.id), row.level, *row.cells] for row in rows]
        footer = ["verdict", "", *(terminal_text(_verdict(run)) for run in runs)]
        table = [["requirement", "level", *headers], *body, footer]
        aligned = _align(table)
        rule = "-" * max(len(line) for line in aligned)
        return [aligned[0], rule, *aligned[1:-1], rule, aligned[-1]]

    out = lines(labels)
    if max(len(line) for line in out) > width:
        legend = [
            [f"[{n}]", label, terminal_text(run.path), terminal_text(_details(run))]
            for n, (label, run) in enumerate(zip(labels, runs, strict=True), 1)
        ]
        out = [*_align(legend), "", *lines([f"[{n}]" for n in range(1, len(runs) + 1)])]
    return "\n".join([*out, "", NOTE]) + "\n"


def render_diff_terminal(d: Diff) -> str:
    out = [
        f"A: {terminal_text(d.a.label)}  ({terminal_text(d.a.path)})",
        f"B: {terminal_text(d.b.label)}  ({terminal_text(d.b.path)})",
    ]
    out += [f"note: {terminal_text(note)}" for note in d.notes]
    out += ["", f"Status changes ({len(d.changes)}):"]
    out += _align(
        [
            [c.kind, c.level, terminal_text(c.id), f"{displayed(c.before)} -> {displayed(c.after)}"]
            for c in d.changes
        ]
        or [["none"]],
        indent="  ",
    )
    out += ["", f"Measurements moved by more than their limit ({len(d.moves)}):"]
    out += _align(
        [
            [
                _move_word(m),
                m.level,
                terminal_text(m.id),
                "{} -> {}".format(*_move_cells(m)[:2]),
                "(moved {2}, allowed {3})".format(*_move_cells(m)),
            ]
            for m in d.moves
        ]
        or [["none"]],
        indent="  ",
    )
    for name, ids in (("A", d.only_in_a), ("B", d.only_in_b)):
        if ids:
            out += ["", f"Only in {name} ({len(ids)}): " + ", ".join(terminal_text(i) for i in ids)]
    out += ["", terminal_text(_summary(d))]
    return "\n".join(out) + "\n"


# Markdown (GitHub)


def _md_table(header: Sequence[str], body: Iterable[Sequence[str]]) -> list[str]:
    rows = [header, ["---"] * len(header), *body]
    return ["| " + " | ".join(row) + " |" for row in rows]


def _md_runs(runs: Sequence[Run]) -> list[str]:
    return [
        f"{n}. **{markdown_text(run.label)}**: verdict {markdown_text(_verdict(run))}; "
        f"{markdown_text(_details(run))}"
        + ("" if run.absent else f"; file {markdown_text(run.path.name)}")
        for n, run in enumerate(runs, 1)
    ]


def _md_status(level: str, status: str) -> str:
    text = markdown_text(_status_word(level, status))
    return f"**{text}**" if status == "FAIL" and level == "MUST" else text


def render_markdown(runs: Sequence[Run], rows: Sequence[Row]) -> str:
    header = ["Requirement", "Level", *(markdown_text(run.label) for run in runs)]
    body = [
        [markdown_text(row.id), row.level, *(_md_status(row.level, c) for c in row.cells)]
        for row in rows
    ]
    footer = ["**Verdict**", "", *(f"**{markdown_text(_verdict(run))}**" for run in runs)]
    out = ["**Runs**", "", *_md_runs(runs), "", *_md_table(header, [*body, footer])]
    return "\n".join([*out, "", f"_{markdown_text(NOTE)}_"]) + "\n"


def render_diff_markdown(d: Diff) -> str:
    out = [f"**A**: {markdown_text(d.a.label)} ({markdown_text(d.a.path.name)})  "]
    out.append(f"**B**: {markdown_text(d.b.label)} ({markdown_text(d.b.path.name)})")
    if d.notes:
        out += ["", *(f"> Note: {markdown_text(note)}  " for note in d.notes)]
    out += ["", f"#### Status changes ({len(d.changes)})", ""]
    if d.changes:
        out += _md_table(
            ["Requirement", "Level", "A", "B", "Change"],
            (
                [
                    markdown_text(c.id),
                    c.level,
                    markdown_text(displayed(c.before)),
                    markdown_text(displayed(c.after)),
                    c.kind,
                ]
                for c in d.changes
            ),
        )
    out += ["", f"#### Measurements moved by more than their limit ({len(d.moves)})", ""]
    if d.moves:
        out += _md_table(
            ["Requirement", "Level", "A", "B", "Moved", "Allowed", "Change"],
            ([markdown_text(m.id), m.level, *_move_cells(m), _move_word(m)] for m in d.moves),
        )
    for name, ids in (("A", d.only_in_a), ("B", d.only_in_b)):
        if ids:
            out += ["", f"Only in {name}: " + ", ".join(markdown_text(i) for i in ids)]
    out += ["", f"**{markdown_text(_summary(d))}**"]
    return "\n".join(out) + "\n"


# HTML: one self-contained page (no scripts, no network: the CSP forbids both)

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em;color:#1f2328}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}
th,td{padding:3px 10px;border-bottom:1px solid #d0d7de;text-align:left;white-space:nowrap}
thead th{position:sticky;top:0;background:#f6f8fa;vertical-align:bottom}
tfoot td{font-weight:600;border-top:2px solid #d0d7de}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
.chip{display:inline-block;min-width:6em;padding:1px 8px;border-radius:10px;font-size:12px;
font-weight:600;text-align:center}
.pass{background:#dafbe1;color:#116329}.fail{background:#ffebe9;color:#a40e26}
.warn{background:#fff8c5;color:#7d4e00}.unsupported{background:#ddf4ff;color:#0550ae}
.na{background:#eaeef2;color:#57606a}.notrun{background:#f6f8fa;color:#6e7781}
.xfail{background:#fbefff;color:#8250df}.stale{background:#ffe7d1;color:#953800}
.missing{color:#8c959f}.other{background:#eaeef2;color:#1f2328}
.regression{color:#a40e26;font-weight:600}.improvement{color:#116329}
.note{color:#57606a}
.grid{overflow:auto;max-height:85vh;max-width:100%;border:1px solid #d0d7de}
.grid table{border-collapse:separate;border-spacing:0;margin:0}
.grid thead th{z-index:2}
.grid th.run{padding:8px 2px;text-align:center}
.grid th.run span{display:inline-block;writing-mode:vertical-rl;transform:rotate(180deg);
max-inline-size:13em;white-space:normal;text-align:left;font-weight:600}
.grid .req{position:sticky;left:0;z-index:1;background:#fff;font-weight:normal;
border-right:1px solid #d0d7de}
.grid thead .req{z-index:3;background:#f6f8fa}
.grid tfoot td{position:sticky;bottom:0;background:#f6f8fa}.grid tfoot .req{z-index:3}
.grid .level{color:#57606a;font-size:11px;margin-left:.5em}
.grid td{padding:3px 4px}
"""


def _chip(level: str, status: str, title: str = "") -> str:
    css = style.shown(status, level).css if status != MISSING else "missing"
    tip = f' title="{html_text(title)}"' if title else ""
    return f'<span class="chip {css}"{tip}>{html_text(_status_word(level, status))}</span>'


def _cell_title(entry: RequirementResult | None) -> str:
    """The reason, or what was measured against which limit, for a cell's tooltip."""
    if entry is None:
        return ""
    reason = _text(entry.reason)
    if reason:
        return reason
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
        f"<title>{html_text(title)}</title><style>{_CSS}{css}</style></head><body>",
        f"<h1>{html_text(title)}</h1>",
    ]
    return "\n".join([*head, *body, "</body></html>"]) + "\n"


def _html_runs(runs: Sequence[Run], names: Sequence[str]) -> list[str]:
    rows = [
        f"<tr><td>{html_text(name)}</td><td>{html_text(run.label)}</td><td><code>{html_text(run.path.name)}</code>"
        f"</td><td>{html_text(_details(run))}</td><td>{_chip('MUST', _verdict(run))}</td></tr>"
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
    """The matrix page; ``preface`` and ``appendix`` are HTML the caller escaped, placed
    before and after the tables, ``css`` more rules for them.

    The grid scrolls inside a box of its own, its requirement names (with their levels) and
    its column heads (turned upright to keep columns narrow) sticky at the box's edges, so a
    wide matrix stays readable: whichever cell is in view, its row and column are named."""
    tables = [run.requirements() for run in runs]
    header = "".join(
        f'<th class="run" title="{html_text(f"{run.label}: {run.path}")}">'
        f"<span>{n}. {html_text(run.label)}</span></th>"
        for n, run in enumerate(runs, 1)
    )
    body = []
    for row in rows:
        cells = "".join(
            f"<td>{_chip(row.level, cell, _cell_title(table.get(row.id)))}</td>"
            for cell, table in zip(row.cells, tables, strict=True)
        )
        body.append(
            f'<tr><th class="req" scope="row"><code>{html_text(row.id)}</code>'
            f'<span class="level">{html_text(row.level)}</span></th>{cells}</tr>'
        )
    verdicts = "".join(f"<td>{_chip('MUST', _verdict(run))}</td>" for run in runs)
    return _page(
        title or f"Conformance of {len(runs)} run{'s' if len(runs) != 1 else ''}",
        [
            *preface,
            "<h2>Runs</h2>",
            *_html_runs(runs, [str(n) for n in range(1, len(runs) + 1)]),
            "<h2>Requirements</h2>",
            '<div class="grid"><table>',
            f'<thead><tr><th class="req">Requirement</th>{header}</tr></thead>',
            "<tbody>",
            *body,
            "</tbody>",
            f'<tfoot><tr><td class="req">verdict</td>{verdicts}</tr></tfoot></table></div>',
            f'<p class="note">{html_text(NOTE)}</p>',
            *appendix,
        ],
        css,
    )


def _html_table(header: Sequence[str], rows: Iterable[str]) -> list[str]:
    """A table of ``header`` over ``rows`` (each a <tr> the caller escaped)."""
    heads = "".join(f"<th>{name}</th>" for name in header)
    return [f"<table><thead><tr>{heads}</tr></thead><tbody>", *rows, "</tbody></table>"]


def render_diff_html(d: Diff) -> str:
    body = _html_runs([d.a, d.b], ["A", "B"])
    body += [f'<p class="note">Note: {html_text(note)}</p>' for note in d.notes]
    body.append(f"<h2>Status changes ({len(d.changes)})</h2>")
    if d.changes:
        body += _html_table(
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
        body += _html_table(
            ["Requirement", "Level", "A", "B", "Moved", "Allowed", "Change"],
            (
                f"<tr><td><code>{html_text(m.id)}</code></td><td>{html_text(m.level)}</td>"
                + "".join(f"<td>{html_text(cell)}</td>" for cell in _move_cells(m))
                + f'<td class="{"regression" if m.worse else "improvement"}">'
                f"{_move_word(m)}</td></tr>"
                for m in d.moves
            ),
        )
    for name, ids in (("A", d.only_in_a), ("B", d.only_in_b)):
        if ids:
            codes = ", ".join(f"<code>{html_text(i)}</code>" for i in ids)
            body.append(f"<h2>Only in {name} ({len(ids)})</h2><p>{codes}</p>")
    css = "regression" if d.regressions else "improvement"
    body.append(f'<p class="{css}">{html_text(_summary(d))}</p>')
    return _page("Conformance: A vs B", body)
