"""Runs side by side: the model of a comparison (its table of runs, the diff of two).

Reads results documents (results.json, ``results.schema.json``) only: no catalogue of this
version is consulted, so runs of other suite versions compare too. Loading checks just what
comparing uses. The renderers (``compare_terminal``, ``compare_markdown``, ``compare_html``) are
pure and return text; ``compare_cli`` does the I/O.
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

from conformance.reporting import style
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
    follows: tuple[bool, ...]  # per run: a FAIL that follows from another FAIL of the run


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


def text_of(value: object) -> str | None:
    """A non-empty string with its whitespace collapsed, else None."""
    if not isinstance(value, str):
        return None
    return " ".join(value.split()) or None


def section_of(document: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """The ``key`` section of a document; empty when it is missing or not an object."""
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
    server = section_of(document, "server")
    models = server.get("models")
    first_model = text_of(models[0]) if isinstance(models, list) and models else None
    ident = text_of(server.get("server_header")) or first_model
    model = text_of(section_of(document, "endpoint").get("model")) or first_model
    head = " ".join(part for part in (ident, text_of(server.get("version"))) if part)
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


# The table of runs


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


def comparison_rows(runs: Sequence[Run]) -> list[Row]:
    """The rows of the table of ``runs``: one per requirement of any run, a cell per run (N/A
    for SKIPPED, MISSING where the run lacks it)."""
    tables = [run.requirements() for run in runs]
    rows = []
    for requirement_id in requirement_order(runs):
        entries = [table.get(requirement_id) for table in tables]
        level = next(e.level for e in entries if e is not None)
        cells = tuple(MISSING if e is None else displayed(e.status) for e in entries)
        follows = tuple(e is not None and bool(e.follows_from) for e in entries)
        rows.append(Row(requirement_id, level, cells, follows))
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
    suite_a, suite_b = section_of(a, "suite"), section_of(b, "suite")
    if suite_a.get("catalogue_sha256") != suite_b.get("catalogue_sha256"):
        notes.append(
            f"different requirement catalogues (suite {suite_a.get('version')} vs "
            f"{suite_b.get('version')}): a requirement may have changed meaning"
        )
    run_a, run_b = section_of(a, "run"), section_of(b, "run")
    if run_a.get("precision") != run_b.get("precision"):
        notes.append(f"different tiers: {run_a.get('precision')} vs {run_b.get('precision')}")
    limits_a, limits_b = section_of(run_a, "tolerances"), section_of(run_b, "tolerances")
    for key in sorted(set(limits_a) | set(limits_b)):
        if limits_a.get(key) != limits_b.get(key):
            notes.append(f"limit {key}: {limits_a.get(key)} vs {limits_b.get(key)}")
    for name, section in (("A", run_a), ("B", run_b)):
        selection = section_of(section, "selection")
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
    # regressions first: a CI summary shows what blocks the merge before what improved
    changes = tuple(sorted(changes, key=lambda change: change.kind != "regression"))
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
