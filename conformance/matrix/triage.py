"""The triage of a published matrix: one line per failing requirement of each peer.

Each line says what the server does, why that deviates from the API contract or breaks a
client, and where a public issue about it lives. A judgement call (a precision tier, an arguable
input) says so, with the flag that changes it; a FAIL that the matrix's own peer configuration
produced says which setting; FAILs of one peer with one root cause name that cause alike, and the
page shows them as one defect. A FAIL that follows from another FAIL of its run (results.json's
``follows_from``: it could not be measured because of that one) says nothing of its own: it needs
no line, and the page lists it under its cause. A FAIL with no line, a line whose FAIL is gone, or
a line on a FAIL that follows from another is reported by ``check``: the published matrix has none.

What a line quotes of its own FAIL's measurement it writes as a placeholder that the pages fill in
from the peer's results.json, so that the number cannot go stale when the column is rebuilt:
``{{measured}}`` (the worst measurement, as the reports show it), ``{{limit}}``, ``{{failures}}``
(how many checks failed).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from conformance.checks.result import format_value

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

FILE = "triage.toml"


@dataclass(frozen=True)
class Line:
    peer: str
    requirement: str
    does: str  # what the server does
    why: str  # why that is a deviation: the contract, or the client it breaks
    link: str = ""  # a public issue about it, when one exists
    judgement: str = ""  # when the verdict is a judgement call: which, and the flag that moves it
    setting: str = ""  # when the matrix's own peer configuration produced it: which setting
    cause: str = ""  # the root cause it shares with other FAILs of its peer (same text for all)

    @property
    def key(self) -> tuple[str, str]:
        return (self.peer, self.requirement)


def load(path: Path) -> list[Line]:
    """The lines of ``path`` (none when it does not exist); ValueError naming a bad entry."""
    if not path.exists():
        return []
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the triage: {exc}") from None
    lines = []
    for index, entry in enumerate(document.get("fail", [])):
        # one entry may name several peers that fail alike (two releases, two GGUFs)
        names = entry.get("peer")
        for peer in names if isinstance(names, list) else [names]:
            try:
                line = Line(**{**entry, "peer": peer})
            except TypeError as exc:
                raise ValueError(f"{path}: [[fail]] number {index + 1}: {exc}") from None
            if problem := _problem(line, entry):
                raise ValueError(f"{path}: [[fail]] number {index + 1} ({peer}): {problem}")
            lines.append(line)
    keys = [line.key for line in lines]
    if twice := sorted({key for key in keys if keys.count(key) > 1}):
        raise ValueError(f"{path}: triaged twice: {twice[0][0]} {twice[0][1]}")
    return lines


OWED = ("does", "why")
OPTIONAL = ("link", "judgement", "setting", "cause")  # empty when absent, never empty when given
PLACEHOLDER = re.compile(r"\{\{(\w*)\}\}")
QUOTED = ("measured", "limit", "failures")
FILLED = ("does", "why", "judgement", "setting")  # not cause: its text names one group


def _problem(line: Line, entry: Mapping[str, Any]) -> str | None:
    """What is wrong with one line, or None: every field text, the owed ones and the optional
    ones that are given not blank (a blank cause would group unrelated FAILs), placeholders
    only of what a FAIL measured and only where a line's own words are."""
    for name in ("peer", "requirement", *OWED, *OPTIONAL):
        if not isinstance(getattr(line, name), str):
            return f"{name!r} must be a string, not {type(getattr(line, name)).__name__}"
    if blank := [name for name in OWED if not getattr(line, name).strip()]:
        return f"{' and '.join(map(repr, blank))} owed"
    if blank := [name for name in OPTIONAL if name in entry and not entry[name].strip()]:
        return f"{' and '.join(map(repr, blank))} given but empty"
    for name in (*OWED, *OPTIONAL):
        for placeholder in PLACEHOLDER.findall(getattr(line, name)):
            if placeholder not in QUOTED or name not in FILLED:
                return (
                    f"{name!r} quotes {braced(placeholder)}: a line quotes "
                    f"{', '.join(map(braced, QUOTED))}, in {', '.join(FILLED)}"
                )
    return None


def braced(name: str) -> str:
    return "{{" + name + "}}"


def quoted(line: Line, document: Mapping[str, Any] | None) -> dict[str, str]:
    """What a line's placeholders stand for, from its FAIL in the peer's results (a value the
    results lack is left out)."""
    entries = (document or {}).get("requirements", [])
    entry = next((e for e in entries if e["id"] == line.requirement), None)
    if entry is None:
        return {}
    values = {"measured": entry.get("measured"), "limit": entry.get("limit")}
    shown = {name: _shown(value) for name, value in values.items() if value is not None}
    return {**shown, "failures": f"{len(entry.get('failures', [])):,}"}


def _shown(value: object) -> str:
    """As the reports show a measurement (format_value), whole numbers with commas as prose
    writes them."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    return f"{value:,}" if whole else format_value(value)


def filled(line: Line, document: Mapping[str, Any] | None) -> Line:
    """``line`` with its placeholders replaced by what they stand for (one the results lack
    stays as it is, and ``unfilled`` reports it)."""
    values = quoted(line, document)

    def fill(text: str) -> str:
        return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)

    return replace(line, **{name: fill(getattr(line, name)) for name in FILLED})


def unfilled(
    lines: Iterable[Line], documents: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, str]]:
    """(peer, requirement) of each line with a placeholder its FAIL's results cannot fill."""
    lines_filled = (filled(line, documents.get(line.peer)) for line in lines)
    return [
        line.key
        for line in lines_filled
        if any(PLACEHOLDER.search(getattr(line, name)) for name in FILLED)
    ]


def _fails(document: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    entries = (document or {}).get("requirements", [])
    return [entry for entry in entries if entry.get("status") == "FAIL"]


def fails_of(document: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(requirement, level) of each FAIL of one run that follows from no other, in catalogue
    order: those a triage line explains."""
    return [(e["id"], e["level"]) for e in _fails(document) if not e.get("follows_from")]


def followers_of(document: Mapping[str, Any] | None) -> list[tuple[str, str, tuple[str, ...]]]:
    """(requirement, level, the FAILs it follows from) of each FAIL of one run that follows from
    others, in catalogue order."""
    return [
        (e["id"], e["level"], tuple(e["follows_from"]))
        for e in _fails(document)
        if e.get("follows_from")
    ]


def failures(documents: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """(peer, requirement, level) of every FAIL that follows from no other, in the peers'
    results documents."""
    return [
        (peer, requirement, level)
        for peer, document in documents.items()
        for requirement, level in fails_of(document)
    ]


def following(documents: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """The FAILs that follow from others, by (peer, requirement): the FAILs they follow from."""
    return {
        (peer, requirement): ", ".join(causes)
        for peer, document in documents.items()
        for requirement, _, causes in followers_of(document)
    }


@dataclass(frozen=True)
class Check:
    untriaged: tuple[tuple[str, str], ...]  # a FAIL without a line
    stale: tuple[tuple[str, str], ...]  # a line without its FAIL
    needless: tuple[tuple[str, str, str], ...] = ()  # a line on a FAIL that follows: its causes

    @property
    def ok(self) -> bool:
        return not (self.untriaged or self.stale or self.needless)

    def problems(self) -> list[str]:
        return (
            [f"untriaged FAIL: {peer} {req}" for peer, req in self.untriaged]
            + [f"triage line without a FAIL: {peer} {req}" for peer, req in self.stale]
            + [
                f"triage line on a FAIL that follows from {causes} (the page lists it under "
                f"them; it needs no line): {peer} {req}"
                for peer, req, causes in self.needless
            ]
        )


def check(
    lines: Sequence[Line],
    fails: Iterable[tuple[str, str, str]],
    followers: Mapping[tuple[str, str], str] | None = None,
) -> Check:
    """The lines held to the FAILs (``failures``) and to the FAILs that follow (``following``)."""
    followers = followers or {}
    failed = {(peer, requirement) for peer, requirement, _ in fails}
    triaged = {line.key for line in lines}
    needless = tuple((*key, followers[key]) for key in sorted(triaged & set(followers)))
    stale = tuple(sorted(triaged - failed - set(followers)))
    return Check(tuple(sorted(failed - triaged)), stale, needless)
