"""The baseline gate's rule: a requirement doing worse than in the baseline is a regression."""

from __future__ import annotations

import pytest

from conformance.verdicts.baseline_gate import status_regressions


@pytest.mark.parametrize(
    ("before", "now"),
    [
        ("PASS", "FAIL"),
        ("PASS", "UNSUPPORTED"),
        ("UNSUPPORTED", "FAIL"),
        ("PASS", "SKIPPED"),  # no longer checked: a bug could hide behind it
        ("PASS", "NOT RUN"),  # deselected, or out of the profile
    ],
)
def test_status_regressions_reports_doing_worse(before: str, now: str) -> None:
    regressions = status_regressions({"r": before, "other": "PASS"}, {"r": now, "other": "PASS"})
    assert regressions == [f"r: {before} before, {now} now"]


@pytest.mark.parametrize(
    ("before", "now"), [("FAIL", "FAIL"), ("PASS", "PASS"), ("SKIPPED", "FAIL")]
)
def test_status_regressions_ignores_what_is_not_worse(before: str, now: str) -> None:
    assert status_regressions({"r": before}, {"r": now}) == []


def test_status_regressions_ignores_requirements_new_in_this_run() -> None:
    assert status_regressions({}, {"new": "FAIL"}) == []


def test_status_regressions_ignores_requirements_this_suite_no_longer_has() -> None:
    assert status_regressions({"retired": "PASS"}, {"r": "PASS"}) == []
