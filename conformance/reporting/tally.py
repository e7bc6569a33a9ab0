"""Per-requirement verdicts built from pytest reports (also those sent back by xdist workers).

A test carries its requirement ids and the records of its checks in ``user_properties``, which
pytest copies into every report and xdist ships to the controller; so this works unchanged in
parallel runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.requirements import BY_ID, CATALOGUE, Requirement

REQUIREMENTS_KEY = "conformance.requirements"
CHECK_KEY = "conformance.check"
NOTE_KEY = "conformance.note"
SERIES_KEY = "conformance.series"  # per-input measurements for the report's plots
LATENCY_KEY = "conformance.latency"  # the requests a test sent, timed
WORST_CASES = 5  # checks kept per requirement, smallest margins first
UNSUPPORTED_PREFIX = "unsupported: "

# When tests disagree about a requirement, the more serious status wins.
PRECEDENCE = ("FAIL", "PASS", "UNSUPPORTED", "SKIPPED")


def statuses_for_test(
    requirements: Iterable[str],
    checks: Iterable[Mapping[str, Any]],
    outcome: str,
    skip_reason: str = "",
) -> dict[str, str]:
    """The status each declared requirement gets from one finished test.

    A failing check fails its requirement, even in a test that then skipped. A test that
    failed without any failing check (an exception, a bad response) fails all its
    requirements. When a check explains the failure, the other requirements keep what their
    own checks say (or SKIPPED: not reached)."""
    requirements = list(requirements)
    checks = list(checks)
    failing = {c["requirement"] for c in checks if not c["passed"]}
    passing = {c["requirement"] for c in checks if c["passed"]}
    if outcome == "skipped":  # a recorded failure is never hidden by a later skip
        status = "UNSUPPORTED" if skip_reason.startswith(UNSUPPORTED_PREFIX) else "SKIPPED"
        return {r: "FAIL" if r in failing else status for r in requirements}
    explained = outcome != "failed" or bool(failing)
    statuses = {}
    for requirement in requirements:
        if requirement in failing or not explained:
            statuses[requirement] = "FAIL"
        elif requirement in passing or outcome == "passed":
            statuses[requirement] = "PASS"
        else:
            statuses[requirement] = "SKIPPED"
    return statuses


@dataclass
class Verdict:
    status: str = "NOT RUN"
    tests: int = 0
    worst: dict[str, Any] | None = None  # the check record with the smallest margin
    failures: list[str] = field(default_factory=list)  # one line per failed check
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why
    unsupported: str = ""  # why the server declined, when the status is UNSUPPORTED
    declined: list[str] = field(default_factory=list)  # the tests it declined, by id
    skipped: str = ""  # why it could not be checked, when the status is SKIPPED
    duration: float = 0.0  # seconds, over its tests
    worst_cases: list[dict[str, Any]] = field(default_factory=list)  # smallest margins first
    failure_records: list[dict[str, Any]] = field(default_factory=list)  # with transcripts
    reason: str = ""  # set with a status decided after the run (known failures, capabilities)

    def merge(
        self,
        status: str,
        checks: Iterable[Mapping[str, Any]],
        nodeid: str,
        error: str = "",
        duration: float = 0.0,
    ) -> None:
        self.tests += 1
        self.duration += duration
        if self.status == "NOT RUN" or PRECEDENCE.index(status) < PRECEDENCE.index(self.status):
            self.status = status
        checks = list(checks)
        for check in checks:
            if not check["passed"]:
                self.failures.append(f"{nodeid}: {check['detail']}")
                self.failure_records.append(_failure(nodeid, check))
            if self._worse(check):
                self.worst = dict(check)
            self.worst_cases.append({"test": nodeid, **check})
        self.worst_cases = sorted(self.worst_cases, key=_severity)[:WORST_CASES]
        if status == "FAIL" and all(check["passed"] for check in checks):
            self.failures.append(f"{nodeid}: {error or 'failed'}")  # failed outside any check
            self.failure_records.append(_failure(nodeid, {"detail": error or "failed"}))

    def _worse(self, check: Mapping[str, Any]) -> bool:
        if self.worst is None:
            return True
        if self.worst["passed"] != check["passed"]:
            return not check["passed"]
        mine, theirs = self.worst.get("margin"), check.get("margin")
        if theirs is None:
            return False
        return mine is None or theirs < mine


def _failure(nodeid: str, check: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "test": nodeid,
        "case": check.get("case"),
        "detail": check["detail"],
        "response": check.get("response"),
        "reproducer": check.get("reproducer"),
    }


def _severity(check: Mapping[str, Any]) -> tuple[bool, float]:
    """Failed checks first, then the smallest margin (a check without one last)."""
    margin = check.get("margin")
    return check["passed"], float("inf") if margin is None else float(margin)


class Tally:
    """Accumulates verdicts for the whole catalogue over a run."""

    def __init__(self, requirements: Iterable[Requirement] = CATALOGUE) -> None:
        """``requirements``: those in play in this run (the baseline gate's only with one)."""
        self.requirements = tuple(requirements)
        self.verdicts: dict[str, Verdict] = {r.id: Verdict() for r in self.requirements}
        self.series: dict[str, list[dict[str, Any]]] = {"norms": [], "agreement": []}
        # per requirement, what the results document adds (known_failure, capability)
        self.annotations: dict[str, dict[str, Any]] = {}
        self.latency: list[dict[str, Any]] = []

    def add(
        self,
        nodeid: str,
        properties: Iterable[tuple[str, Any]],
        outcome: str,
        skip_reason: str = "",
        error: str = "",
        duration: float = 0.0,
    ) -> None:
        properties = list(properties)
        for series in (v for k, v in properties if k == SERIES_KEY):
            self.series.setdefault(series["name"], []).extend(series["points"])
        requirements: list[str] = next((v for k, v in properties if k == REQUIREMENTS_KEY), [])
        checks = [v for k, v in properties if k == CHECK_KEY]
        for note in (v for k, v in properties if k == NOTE_KEY):
            if note["requirement"] in self.verdicts:
                self.verdicts[note["requirement"]].notes.append(note["text"])
        statuses = statuses_for_test(requirements, checks, outcome, skip_reason)
        for requirement, status in statuses.items():
            if requirement not in self.verdicts:  # not in play in this run
                continue
            own = [c for c in checks if c["requirement"] == requirement]
            self.verdicts[requirement].merge(status, own, nodeid, error, duration)
            if status == "UNSUPPORTED":
                verdict = self.verdicts[requirement]
                verdict.unsupported = skip_reason.removeprefix(UNSUPPORTED_PREFIX)
                verdict.declined.append(nodeid.rpartition("::")[2])
            elif status == "SKIPPED" and not self.verdicts[requirement].skipped:
                self.verdicts[requirement].skipped = skip_reason

    def add_timings(self, nodeid: str, properties: Iterable[tuple[str, Any]]) -> None:
        """The requests a finished test sent (from its teardown report)."""
        for timings in (v for k, v in properties if k == LATENCY_KEY):
            self.latency += [{"test": nodeid, **timing} for timing in timings]

    def counts(self) -> dict[str, int]:
        """passed / failed (MUST) / warnings (SHOULD failures) / unsupported / not applicable
        (its tests skipped, with a reason) / not run (deselected by -k, -m or --requirements) /
        xfail and stale (a known failure that failed as expected, or now passes)."""
        keys = ("passed", "failed", "warnings", "unsupported", "not_applicable", "not_run")
        counts = dict.fromkeys((*keys, "xfail", "stale"), 0)
        for requirement_id, verdict in self.verdicts.items():
            if verdict.status in ("XFAIL", "STALE"):  # set by a --known-failures file
                counts[verdict.status.lower()] += 1
            elif verdict.status == "PASS":
                counts["passed"] += 1
            elif verdict.status == "FAIL":
                key = "failed" if BY_ID[requirement_id].level == "MUST" else "warnings"
                counts[key] += 1
            elif verdict.status == "UNSUPPORTED":
                counts["unsupported"] += 1
            elif verdict.status == "SKIPPED":
                counts["not_applicable"] += 1
            else:
                counts["not_run"] += 1
        return counts

    @property
    def ran_anything(self) -> bool:
        return any(v.tests for v in self.verdicts.values())
