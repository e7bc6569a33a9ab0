"""Per-requirement verdicts built from pytest reports (also those sent back by xdist workers).

A test carries its requirement ids and the records of its checks in ``user_properties``, which
pytest copies into every report and xdist ships to the controller; so this works unchanged in
parallel runs. On that wire a record is plain data (``CheckRecord.to_json``); here it is typed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from conformance.requirements import CATALOGUE, Requirement
from conformance.verdicts.records import (
    CapabilityJudgement,
    CheckRecord,
    KnownFailure,
    Measured,
    Transcript,
)
from conformance.verdicts.status import PRECEDENCE, Status
from conformance.wire import RequestCount

REQUIREMENTS_KEY = "conformance.requirements"
CHECK_KEY = "conformance.check"
NOTE_KEY = "conformance.note"
SERIES_KEY = "conformance.series"  # per-input measurements for the report's plots
LATENCY_KEY = "conformance.latency"  # the requests a test sent, timed
RETRIES_KEY = "conformance.retries"  # how many requests a test sent again after a 429 or 503
REQUESTS_KEY = "conformance.requests"  # the requests sent since the last test's (RequestCount)
WORST_CASES = 5  # checks kept per requirement, smallest margins first
UNSUPPORTED_PREFIX = "unsupported: "
DESELECTED = "deselected (-k, -m or --requirements)"

Properties = Iterable[tuple[str, Any]]


def requirements_of(properties: Properties) -> list[str]:
    """The requirement ids a test's ``user_properties`` name (its marker's)."""
    ids: list[str] = next((v for k, v in properties if k == REQUIREMENTS_KEY), [])
    return ids


def retries_text(retries: int) -> str:
    """How the reports say a requirement's retried requests."""
    return f"{retries} request{'s' if retries != 1 else ''} retried after a 429 or 503"


def statuses_for_test(
    requirements: Iterable[str],
    checks: Iterable[CheckRecord],
    outcome: str,
    skip_reason: str = "",
) -> dict[str, Status]:
    """The status each declared requirement gets from one finished test.

    A failing check fails its requirement, even in a test that then skipped. A test that
    failed without any failing check (an exception, a bad response) fails all its
    requirements. When a check explains the failure, the other requirements keep what their
    own checks say (or SKIPPED: not reached)."""
    requirements = list(requirements)
    checks = list(checks)
    failing = {c.requirement for c in checks if not c.passed}
    passing = {c.requirement for c in checks if c.passed}
    if outcome == "skipped":  # a recorded failure is never hidden by a later skip
        unsupported = skip_reason.startswith(UNSUPPORTED_PREFIX)
        status = Status.UNSUPPORTED if unsupported else Status.SKIPPED
        return {r: Status.FAIL if r in failing else status for r in requirements}
    explained = outcome != "failed" or bool(failing)
    statuses = {}
    for requirement in requirements:
        if requirement in failing or not explained:
            statuses[requirement] = Status.FAIL
        elif requirement in passing or outcome == "passed":
            statuses[requirement] = Status.PASS
        else:
            statuses[requirement] = Status.SKIPPED
    return statuses


@dataclass(frozen=True)
class Verdict:
    """One requirement over a run: its status, the worst measurement, the worst cases and the
    transcripts of its failures. Each test's outcome gives a new Verdict (``merge``)."""

    status: Status = Status.NOT_RUN
    level: str = "MUST"
    tests: int = 0
    worst: CheckRecord | None = None  # the check with the smallest margin
    worst_cases: tuple[CheckRecord, ...] = ()  # smallest margins first, at most WORST_CASES
    transcripts: tuple[Transcript, ...] = ()  # one per failed check (or failed test)
    notes: tuple[str, ...] = ()  # what could not be checked, and why
    unsupported: str = ""  # why the server declined, when the status is UNSUPPORTED
    declined: tuple[str, ...] = ()  # the tests it declined, by name
    skipped: str = ""  # why it could not be checked, when the status is SKIPPED
    duration: float = 0.0  # seconds, over its tests
    reason: str = ""  # set with a status decided after the run (known failures, capabilities)
    known_failure: KnownFailure | None = None  # the --known-failures entry naming it
    capability: CapabilityJudgement | None = None  # what --capabilities declared of it
    retries: int = 0  # requests its tests sent again after a 429 or 503
    follows_from: tuple[str, ...] = ()  # the FAILs of the run its own failure follows from

    @property
    def measured(self) -> Measured | None:
        return None if self.worst is None else self.worst.measured

    @property
    def limit(self) -> str | None:
        return None if self.worst is None else self.worst.limit

    @property
    def margin(self) -> float | None:
        return None if self.worst is None else self.worst.margin

    @property
    def failures(self) -> list[str]:
        """One line per failure: ``test: detail``."""
        return [transcript.line() for transcript in self.transcripts]

    @property
    def explanation(self) -> str:
        """Why the requirement has a status that judged nothing (empty for the others)."""
        return self.reason or {
            Status.UNSUPPORTED: self.unsupported,
            Status.SKIPPED: self.skipped,
            Status.NOT_RUN: DESELECTED,
        }.get(self.status, "")

    def merge(
        self,
        status: Status,
        checks: Iterable[CheckRecord],
        nodeid: str,
        error: str = "",
        duration: float = 0.0,
    ) -> Verdict:
        """This verdict with one more test's outcome and its checks."""
        status = Status(status)
        checks = [check.in_test(nodeid) for check in checks]
        worst, transcripts = self.worst, list(self.transcripts)
        for check in checks:
            if not check.passed:
                transcripts.append(Transcript.of(check))
            if check.worse_than(worst):
                worst = check
        if status is Status.FAIL and all(check.passed for check in checks):
            transcripts.append(Transcript(nodeid, error or "failed"))  # outside any check
        first = self.status is Status.NOT_RUN
        if first or PRECEDENCE.index(status) < PRECEDENCE.index(self.status):
            status_now = status  # the more serious one wins
        else:
            status_now = self.status
        return replace(
            self,
            status=status_now,
            tests=self.tests + 1,
            duration=self.duration + duration,
            worst=worst,
            worst_cases=tuple(sorted((*self.worst_cases, *checks), key=CheckRecord.severity))[
                :WORST_CASES
            ],
            transcripts=tuple(transcripts),
        )


class Tally:
    """Accumulates verdicts for the requirements in play over a run."""

    def __init__(self, requirements: Iterable[Requirement] = CATALOGUE) -> None:
        """``requirements``: those in play in this run (the baseline gate's only with one)."""
        self.requirements = tuple(requirements)
        self.verdicts: dict[str, Verdict] = {
            r.id: Verdict(level=r.level) for r in self.requirements
        }
        # plot points by plot, and the requests sent, timed: plain data for the document
        self.series: dict[str, list[dict[str, Any]]] = {"norms": [], "agreement": []}
        self.latency: list[dict[str, Any]] = []
        self.requests = RequestCount()  # every request of the run, whatever its requirement

    def add(
        self,
        nodeid: str,
        properties: Properties,
        outcome: str,
        skip_reason: str = "",
        error: str = "",
        duration: float = 0.0,
    ) -> None:
        """One finished test: its ``user_properties`` as pytest (or xdist) delivered them."""
        properties = list(properties)
        for series in (v for k, v in properties if k == SERIES_KEY):
            self.series.setdefault(series["name"], []).extend(series["points"])
        requirements = requirements_of(properties)
        checks = [CheckRecord.from_json(v) for k, v in properties if k == CHECK_KEY]
        for note in (v for k, v in properties if k == NOTE_KEY):
            self.annotate(note["requirement"], notes=(note["text"],))
        statuses = statuses_for_test(requirements, checks, outcome, skip_reason)
        for requirement, status in statuses.items():
            verdict = self.verdicts.get(requirement)
            if verdict is None:  # not in play in this run
                continue
            own = [c for c in checks if c.requirement == requirement]
            verdict = verdict.merge(status, own, nodeid, error, duration)
            if status is Status.UNSUPPORTED:
                verdict = replace(
                    verdict,
                    unsupported=skip_reason.removeprefix(UNSUPPORTED_PREFIX),
                    declined=(*verdict.declined, nodeid.rpartition("::")[2]),
                )
            elif status is Status.SKIPPED and not verdict.skipped:
                verdict = replace(verdict, skipped=skip_reason)
            self.verdicts[requirement] = verdict

    def annotate(self, requirement: str, notes: tuple[str, ...] = (), **changes: Any) -> None:
        """Replace fields of a requirement's verdict (and add ``notes``); nothing for a
        requirement not in play."""
        verdict = self.verdicts.get(requirement)
        if verdict is not None:
            self.verdicts[requirement] = replace(verdict, notes=verdict.notes + notes, **changes)

    def add_timings(self, nodeid: str, properties: Properties) -> None:
        """The requests a finished test sent (from its teardown report): their times, how
        many it sent again after a 429 or 503, counted under each of its requirements, and
        the count of what its process sent, for the run's."""
        properties = list(properties)
        for timings in (v for k, v in properties if k == LATENCY_KEY):
            self.latency += [{"test": nodeid, **timing} for timing in timings]
        for sent in (v for k, v in properties if k == REQUESTS_KEY):
            self.requests += RequestCount.from_json(sent)
        retries = sum(int(v) for k, v in properties if k == RETRIES_KEY)
        if retries:
            requirements = requirements_of(properties)
            for requirement in requirements:
                verdict = self.verdicts.get(requirement)
                if verdict is not None:
                    self.verdicts[requirement] = replace(verdict, retries=verdict.retries + retries)

    @property
    def retries(self) -> int:
        """Requests sent again after a 429 or 503 over the run (by the tests of requirements
        in play)."""
        return sum(verdict.retries for verdict in self.verdicts.values())

    def counts(self) -> dict[str, int]:
        """passed / failed (MUST) / warnings (SHOULD failures) / unsupported / not applicable
        (its tests skipped, with a reason) / not run (deselected by -k, -m or --requirements) /
        xfail and stale (a known failure that failed as expected, or now passes)."""
        keys = ("passed", "failed", "warnings", "unsupported", "not_applicable", "not_run")
        counts = dict.fromkeys((*keys, "xfail", "stale"), 0)
        for verdict in self.verdicts.values():
            counts[count_key(verdict.status, verdict.level)] += 1
        return counts

    @property
    def ran_anything(self) -> bool:
        return any(v.tests for v in self.verdicts.values())

    def in_order(self) -> list[tuple[Requirement, Verdict]]:
        """Every requirement in play with its verdict, in catalogue order."""
        return [(r, self.verdicts[r.id]) for r in self.requirements]


COUNT_KEYS = {
    Status.PASS: "passed",
    Status.UNSUPPORTED: "unsupported",
    Status.SKIPPED: "not_applicable",
    Status.NOT_RUN: "not_run",
    Status.XFAIL: "xfail",
    Status.STALE: "stale",
}


def count_key(status: Status, level: str) -> str:
    """Which of ``Tally.counts`` a requirement with ``status`` counts in."""
    if status is Status.FAIL:
        return "failed" if level == "MUST" else "warnings"
    return COUNT_KEYS[status]
