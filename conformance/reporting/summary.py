"""Human-readable summaries of a run: terminal lines and a JSON document."""

from __future__ import annotations

from typing import Any

from conformance.checks.result import format_value
from conformance.reporting.tally import Tally, Verdict

# How statuses are shown: a skipped requirement was not applicable here (with the reason).
DISPLAYED = {"SKIPPED": "N/A"}


def _worst_text(verdict: Verdict) -> str:
    worst = verdict.worst
    if verdict.status == "FAIL" and (worst is None or worst["passed"]):
        return verdict.failures[0] if verdict.failures else ""  # failed outside any check
    if worst is None:
        return ""
    margin = worst.get("margin")
    margin_text = "" if margin is None else f" (margin {margin:.3g})"
    return f"measured {format_value(worst['measured'])} vs {worst['limit']}{margin_text}"


def requirement_lines(tally: Tally) -> list[str]:
    """One line per requirement: status, level, id, worst measurement."""
    width = max(len(r.id) for r in tally.requirements)
    lines = []
    for requirement in tally.requirements:
        verdict = tally.verdicts[requirement.id]
        status = DISPLAYED.get(verdict.status, verdict.status)
        detail = {
            "UNSUPPORTED": verdict.unsupported,
            "N/A": verdict.skipped,
            "NOT RUN": "deselected (-k, -m or --requirements)",
            "XFAIL": verdict.reason,
            "STALE": verdict.reason,
        }.get(status, _worst_text(verdict))
        lines.append(
            f"{status:<11} {requirement.level:<6} {requirement.id:<{width}}  {detail}".rstrip()
        )
    return lines


def warning_lines(tally: Tally) -> list[str]:
    """SHOULD requirements that failed: reported, but they do not fail the run."""
    lines = []
    for requirement in tally.requirements:
        verdict = tally.verdicts[requirement.id]
        if requirement.level == "SHOULD" and verdict.status == "FAIL":
            lines += [f"SHOULD {requirement.id}: {failure}" for failure in verdict.failures[:3]]
    return lines


def note_lines(tally: Tally) -> list[str]:
    """Limits of what was checked (e.g. no tokenizer to compare token ids with text)."""
    lines = []
    for requirement in tally.requirements:
        verdict = tally.verdicts[requirement.id]
        notes = dict.fromkeys(verdict.notes)  # once each, in order
        lines += [f"{requirement.id}: {note}" for note in notes]
        if verdict.declined and verdict.status != "UNSUPPORTED":  # hidden by a PASS otherwise
            lines.append(
                f"{requirement.id}: {verdict.status}, but {len(verdict.declined)} of its "
                f"{verdict.tests} tests UNSUPPORTED (cleanly refused): "
                + ", ".join(verdict.declined)
            )
    return lines


def final_line(tally: Tally) -> str:
    c = tally.counts()
    line = (
        f"conformance: {c['passed']} passed, {c['failed']} failed, "
        f"{c['unsupported']} unsupported, {c['not_applicable']} not applicable, "
        f"{c['not_run']} not run"
    )
    if c["warnings"]:
        line += f" ({c['warnings']} SHOULD warning{'s' if c['warnings'] > 1 else ''})"
    return line


def results_document(tally: Tally, header: dict[str, Any]) -> dict[str, Any]:
    """Everything a CI job or a later baseline comparison needs, as JSON-able data."""
    return {
        **header,
        "counts": tally.counts(),
        "requirements": [
            {
                "id": requirement.id,
                "level": requirement.level,
                "status": tally.verdicts[requirement.id].status,
                "tests": tally.verdicts[requirement.id].tests,
                "worst": tally.verdicts[requirement.id].worst,
                "failures": tally.verdicts[requirement.id].failures,
                "notes": sorted(set(tally.verdicts[requirement.id].notes)),
            }
            for requirement in tally.requirements
        ],
    }
