"""From pytest's reports to the tally: which phase of a test gives its verdict, what its
outcome and reason were, and which failures a --known-failures entry must cover."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from conformance.verdicts.known_failures import covering
from conformance.verdicts.records import CheckRecord, KnownFailure
from conformance.verdicts.status import Status
from conformance.verdicts.tally import CHECK_KEY, Tally, requirements_of

KNOWN_FAILURE = "known failure: "  # the xfail reason of a test a --known-failures entry covers
ERROR_LIMIT = 200  # characters of a failed test's last error line


def add_report(tally: Tally, report: pytest.TestReport) -> None:
    """One verdict per test: from the call phase, or from setup when it never got there.
    The requests a test sent are on its teardown report."""
    if report.when == "teardown":
        tally.add_timings(report.nodeid, report.user_properties)
    if report.when != "call" and (report.when != "setup" or report.outcome == "passed"):
        return
    outcome, reason = report.outcome, ""
    if str(getattr(report, "wasxfail", "")).startswith(KNOWN_FAILURE):
        outcome = "failed"  # judged as failed; the known-failures file decides its status
    elif report.skipped and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2].removeprefix("Skipped: ")
    error = report.longreprtext.strip().splitlines()[-1] if outcome == "failed" else ""
    tally.add(
        report.nodeid, report.user_properties, outcome, reason, error[:ERROR_LIMIT], report.duration
    )


def failures_of(properties: Iterable[tuple[str, Any]]) -> list[tuple[str, str | None]]:
    """(requirement, case) of each failed check of a failed test; without one (it failed
    outside any check) every requirement of the test, for no case in particular."""
    properties = list(properties)
    checks = [CheckRecord.from_json(v) for k, v in properties if k == CHECK_KEY]
    failures = [(check.requirement, check.case) for check in checks if not check.passed]
    if failures:
        return failures
    return [(requirement, None) for requirement in requirements_of(properties)]


def fail_before_any_test(tally: Tally, test: str, record: CheckRecord) -> None:
    """A verdict given before any test ran (identifying the reference found vectors with no
    fixed dimension): ``record``'s requirement FAILs on it, and every other requirement is NOT
    RUN, saying why."""
    requirement = record.requirement
    verdict = tally.verdicts.get(requirement)
    if verdict is not None:
        tally.verdicts[requirement] = verdict.merge(Status.FAIL, [record], test)
        tally.annotate(requirement, notes=(record.detail,))
    why = f"not run: {requirement} FAILED while identifying the reference"
    for other in list(tally.verdicts):
        if other != requirement:
            tally.annotate(other, reason=why)


def excuse_known_failure(
    known_failures: Sequence[KnownFailure], item: pytest.Item, report: pytest.TestReport
) -> None:
    """A failed test whose every failure a --known-failures entry lists becomes an xfail: it
    does not fail the run (its requirement is reported XFAIL)."""
    if not known_failures or report.when != "call" or not report.failed:
        return
    failures = failures_of(item.user_properties)
    entry = covering(known_failures, failures) if failures else None
    if entry is not None:
        report.outcome = "skipped"
        report.wasxfail = KNOWN_FAILURE + entry.reason
