"""The terminal summary of a run: one line per requirement, the notes and warnings, what the
baseline gate found, the reports written, and the final count."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from conformance.checks.result import format_value
from conformance.reporting import style
from conformance.verdicts.records import Certification
from conformance.verdicts.status import Status
from conformance.verdicts.tally import Tally, Verdict, retries_text
from conformance.wire import RequestCount

# A line of the terminal summary: (separator character or "" for a plain line, text, markup)
SummaryLine = tuple[str, str, dict[str, bool]]

NOT_COMPARED = "vectors not compared with any reference"
UNREFERENCED_RISKS = (
    "--reference none: the reference.* requirements were not run, so well-formed but wrong",
    "vectors (wrong pooling, a dropped layer, silent truncation, another model) pass unnoticed.",
)


def _worst_text(verdict: Verdict) -> str:
    if verdict.follows_from:
        return f"not measurable: follows from {', '.join(verdict.follows_from)}"
    worst = verdict.worst
    if verdict.status is Status.FAIL and (worst is None or worst.passed):
        return verdict.failures[0] if verdict.failures else ""  # failed outside any check
    if worst is None:
        return ""
    margin_text = "" if worst.margin is None else f" (margin {worst.margin:.3g})"
    return f"measured {format_value(worst.measured)} vs {worst.limit}{margin_text}"


def requirement_lines(tally: Tally) -> list[str]:
    """One line per requirement: status, level, id, worst measurement (or why none)."""
    width = max(len(r.id) for r in tally.requirements)
    lines = []
    for requirement, verdict in tally.in_order():
        judged = verdict.status in (Status.PASS, Status.FAIL)
        detail = _worst_text(verdict) if judged else verdict.explanation
        status = style.word(verdict.status)
        lines.append(
            f"{status:<11} {requirement.level:<6} {requirement.id:<{width}}  {detail}".rstrip()
        )
    return lines


def warning_lines(tally: Tally) -> list[str]:
    """SHOULD requirements that failed: reported, but they do not fail the run."""
    lines = []
    for requirement, verdict in tally.in_order():
        if requirement.level == "SHOULD" and verdict.status is Status.FAIL:
            lines += [f"SHOULD {requirement.id}: {failure}" for failure in verdict.failures[:3]]
    return lines


def note_lines(tally: Tally) -> list[str]:
    """Limits of what was checked (e.g. no tokenizer to compare token ids with text)."""
    lines = []
    for requirement, verdict in tally.in_order():
        lines += [f"{requirement.id}: {note}" for note in dict.fromkeys(verdict.notes)]
        if verdict.declined and verdict.status is not Status.UNSUPPORTED:  # a PASS hides them
            lines.append(
                f"{requirement.id}: {verdict.status}, but {len(verdict.declined)} of its "
                f"{verdict.tests} tests UNSUPPORTED (cleanly refused): "
                + ", ".join(verdict.declined)
            )
    return lines


def retry_lines(tally: Tally) -> list[str]:
    """Requests sent again after a 429 or 503, per requirement: retries that let a run pass
    can hide a server that refuses work (errors.recovers judges first answers only)."""
    return [
        f"{requirement.id}: {retries_text(verdict.retries)}"
        for requirement, verdict in tally.in_order()
        if verdict.retries
    ]


def requests_line(count: RequestCount) -> str:
    """What the run cost the endpoint, to size the next run of a paid or rate-limited one."""
    line = (
        f"requests: {count.sent:,} sent ({count.retries:,} "
        f"retr{'ies' if count.retries != 1 else 'y'} after 429/503), "
        f"{count.tokens:,} tokens as the server counted them"
    )
    if count.untold:
        line += f", {count.untold:,} answer{'s' if count.untold != 1 else ''} did not say"
    return line


def final_line(tally: Tally) -> str:
    c = tally.counts()
    following = sum(
        1
        for r, v in tally.in_order()
        if v.follows_from and v.status is Status.FAIL and r.level == "MUST"
    )
    failed = f"{c['failed']} failed"
    if following:
        failed += f" ({following} following from others)"
    line = (
        f"conformance: {c['passed']} passed, {failed}, "
        f"{c['unsupported']} unsupported, {c['not_applicable']} not applicable, "
        f"{c['not_run']} not run"
    )
    if c["warnings"]:
        line += f" ({c['warnings']} SHOULD warning{'s' if c['warnings'] > 1 else ''})"
    if tally.retries:
        line += f"; {retries_text(tally.retries)}"
    return line


def summary_lines(
    tally: Tally,
    *,
    baseline: tuple[Path, bool] | None = None,
    regressions: Sequence[str] = (),
    reports: Sequence[Path] = (),
    certification: Certification | None = None,
    unreferenced: bool = False,
) -> Iterator[SummaryLine]:
    """The terminal summary, in order. ``baseline``: its path, and whether it held statuses."""
    yield "=", "embedding conformance", {}
    for line in requirement_lines(tally):
        yield "", line, {"red": line.startswith("FAIL"), "green": line.startswith("PASS")}
    yield from _section("notes", note_lines(tally), {})
    warnings = warning_lines(tally)
    yield from _section("SHOULD requirements not met (warnings)", warnings, {"yellow": True})
    yield from _section("retried requests", retry_lines(tally), {"yellow": True})
    if baseline is not None:
        yield from _baseline_lines(*baseline, regressions)
    yield from _section("reports", [str(path) for path in reports], {})
    if certification is not None:
        certified = certification.certified
        yield "", certification.line(), {"bold": True, "green": certified, "red": not certified}
    final = final_line(tally)
    if unreferenced:
        yield from _section(NOT_COMPARED, list(UNREFERENCED_RISKS), {"red": True})
        final += f"; {NOT_COMPARED}"
    if tally.requests.sent:
        yield "", requests_line(tally.requests), {}
    yield "", final, {"bold": True}


def _baseline_lines(
    path: Path, has_statuses: bool, regressions: Sequence[str]
) -> Iterator[SummaryLine]:
    yield "-", f"against the baseline {path}", {}
    lines = [f"REGRESSION {line}" for line in regressions] or [
        "no requirement does worse than in the baseline's run"
    ]
    for line in lines:
        yield "", line, {"red": bool(regressions)}
    if not has_statuses:
        yield "", "(the baseline holds no results.json: statuses not compared)", {}


def _section(title: str, lines: list[str], markup: dict[str, bool]) -> Iterator[SummaryLine]:
    if lines:
        yield "-", title, {}
        for line in lines:
            yield "", line, markup


def results_document(tally: Tally, header: dict[str, Any]) -> dict[str, Any]:
    """A short JSON summary: the counts and, per requirement, status and worst check."""
    return {
        **header,
        "counts": tally.counts(),
        "requirements": [
            {
                "id": requirement.id,
                "level": requirement.level,
                "status": verdict.status.value,
                "tests": verdict.tests,
                "worst": None if verdict.worst is None else verdict.worst.to_json(),
                "failures": verdict.failures,
                "notes": sorted(set(verdict.notes)),
            }
            for requirement, verdict in tally.in_order()
        ],
    }
