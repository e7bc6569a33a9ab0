"""``--known-failures FILE``: failures a vendor knows of and keeps in their own repository.

A listed failure is reported XFAIL and does not fail the run; an entry whose requirement now
passes is STALE and fails the run, so the list cannot outlive the bugs it names.

The file is TOML::

    [[known-failure]]
    requirement = "errors.unknown-model"
    reason = "answers 404 with code 404; fixed in 2.3"
    link = "https://example.com/issues/123"     # optional
    case = "ctx-past-257"                       # optional: only this input's failures
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from conformance.corpus import load_cases
from conformance.requirements import BY_ID
from conformance.verdicts.records import KnownFailure
from conformance.verdicts.status import Status
from conformance.verdicts.tally import Tally

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CORPORA = ("core", "reference")  # the packaged corpora whose case ids an entry may name


def _entry(number: int, raw: Any, cases: set[str]) -> KnownFailure:
    where = f"known failure #{number}"
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: a table with requirement and reason")
    unknown_keys = set(raw) - {"requirement", "reason", "link", "case"}
    if unknown_keys:
        raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(unknown_keys))}")
    requirement, reason = raw.get("requirement"), raw.get("reason")
    if not isinstance(requirement, str) or requirement not in BY_ID:
        raise ValueError(f"{where}: unknown requirement {requirement!r}")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"{where} ({requirement}): a reason is required")
    case = raw.get("case")
    if case is not None and case not in cases:
        raise ValueError(f"{where} ({requirement}): unknown case {case!r}")
    link = raw.get("link")
    return KnownFailure(requirement, reason, str(link) if link else None, case)


def load_known_failures(path: str | Path) -> tuple[KnownFailure, ...]:
    """Every entry, checked: an unknown requirement or case id is an error (ValueError)."""
    try:
        document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: not a readable TOML file ({exc})") from None
    entries = document.get("known-failure", [])
    if not isinstance(entries, list) or set(document) - {"known-failure"}:
        raise ValueError(f"{path}: expected only [[known-failure]] tables")
    cases = {c.id for corpus in CORPORA for c in load_cases(corpus)}
    try:
        return tuple(_entry(n, raw, cases) for n, raw in enumerate(entries, 1))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def to_json(entries: Iterable[KnownFailure]) -> list[dict[str, Any]]:
    """The entries as plain data, as xdist workers receive them with the settings."""
    return [asdict(entry) for entry in entries]


def from_json(data: Iterable[Mapping[str, Any]]) -> tuple[KnownFailure, ...]:
    return tuple(KnownFailure(**entry) for entry in data)


def covering(
    entries: Iterable[KnownFailure], failures: Iterable[tuple[str, str | None]]
) -> KnownFailure | None:
    """The entry that covers every (requirement, case) failure given, if one entry per failure
    exists (the first is returned, for its reason); None when any failure is not known."""
    first = None
    for requirement, case in failures:
        entry = next((e for e in entries if e.covers(requirement, case)), None)
        if entry is None:
            return None
        first = first or entry
    return first


def apply_known_failures(tally: Tally, entries: Iterable[KnownFailure]) -> None:
    """FAIL -> XFAIL where every failure is listed; PASS -> STALE where an entry names it."""
    entries = tuple(entries)
    for entry in entries:
        verdict = tally.verdicts.get(entry.requirement)
        if verdict is None:  # not in play in this run
            continue
        tally.annotate(entry.requirement, known_failure=entry)
        failures = [(entry.requirement, t.case) for t in verdict.transcripts]
        if verdict.status is Status.FAIL and covering(entries, failures) is not None:
            tally.annotate(
                entry.requirement, status=Status.XFAIL, reason=f"known failure: {entry.reason}"
            )
        elif verdict.status is Status.PASS:  # fixed: the entry must go, or it hides a regression
            tally.annotate(
                entry.requirement,
                status=Status.STALE,
                reason=f"listed as a known failure ({entry.reason}), but it passes",
            )
