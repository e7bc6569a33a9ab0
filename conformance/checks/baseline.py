"""The ``baseline.*`` requirements (the upgrade gate): what the server does now against what it
did before the change."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from conformance.checks.agreement import Comparison, check_agreement
from conformance.checks.result import CheckResult, Verdicts

NAMED = 8  # changes a failure names; a gateway or an upgrade that changes more shows the count


def _none_changed(changes: list[str], total: int, what: str) -> CheckResult:
    """Every change named (up to NAMED): whoever triages a gate reads what changed, not its
    first item."""
    detail = f"{len(changes)} of {total} {what}"
    if changes:
        more = f"; and {len(changes) - NAMED} more" if len(changes) > NAMED else ""
        detail += ": " + "; ".join(changes[:NAMED]) + more
    return CheckResult(not changes, len(changes), "== 0", float(-len(changes)), detail)


def same_acceptance(
    accepted_before: Collection[str],
    rejected_before: Collection[str],
    rejected_now: Collection[str],
) -> CheckResult:
    """The inputs the old server embedded are embedded now, and those it rejected (e.g. past
    its context) are rejected now: a change either way alters what clients get."""
    changed = [
        f"{case_id} was {'accepted' if case_id in accepted_before else 'rejected'} before"
        for case_id in sorted(
            (set(accepted_before) & set(rejected_now)) | (set(rejected_before) - set(rejected_now))
        )
    ]
    total = len(set(accepted_before) | set(rejected_before))
    return _none_changed(changed, total, "inputs accepted or rejected differently")


def vectors(
    compared: Comparison,
    cosine_atol: float,
    atol: float,
    *,
    acceptance: tuple[Collection[str], Collection[str], Collection[str]],
) -> Verdicts:
    """Every input embeds as it did before the change, within the tier, and the same inputs
    are accepted: ``acceptance`` is (accepted before, rejected before, rejected now). Catches an
    engine upgrade that changes pooling, precision or truncation."""
    return (
        same_acceptance(*acceptance),
        *check_agreement(compared, cosine_atol, atol),
    )


def shape(before: Mapping[str, list[str]], now: Mapping[str, list[str]]) -> CheckResult:
    """Every field path (with its JSON type) of the old answers is still there: a field that
    was dropped, renamed or retyped breaks clients that read it. New fields are allowed."""
    lost = [
        f"{encoding} output: {path}"
        for encoding, paths in before.items()
        for path in paths
        if path not in now.get(encoding, [])
    ]
    return _none_changed(lost, sum(map(len, before.values())), "fields lost or retyped")


def errors(before: Mapping[str, Any], now: Mapping[str, Any]) -> CheckResult:
    """Each bad request gets the status it got before, and keeps a conforming error envelope
    if it had one."""
    changed = []
    for bad_id, old in before.items():
        new = now.get(bad_id)
        if new is None:
            continue  # a bad request this version of the suite no longer sends
        if new["status"] != old["status"]:
            changed.append(f"{bad_id}: HTTP {old['status']} before, HTTP {new['status']} now")
        elif old.get("envelope") and not new.get("envelope"):
            changed.append(f"{bad_id}: the error envelope no longer conforms")
    return _none_changed(changed, len(before), "bad requests answered differently")
