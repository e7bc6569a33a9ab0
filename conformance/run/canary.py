"""The state canary of ``state.unchanged``: one fixed request of a few corpus sentences, asked
at the run's start, right after each of its heaviest requests and at its end; every answer must
carry the vectors of the first (``checks.state.unchanged``).

The controller's session asks it at the start, right after the preflight and before any test,
and hands the answer to xdist's workers with the settings; the suite asks it right after each
of the heaviest requests (``suite/shape_fixtures.py``); the controller asks it again at the end
of the run, once every test of every worker has finished, and records that verdict in the tally
as a test's would be.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import pytest

from conformance.checks.state import FIRST, CanaryAnswer, unchanged
from conformance.checks.status import unmeasurable
from conformance.client import EmbeddingsClient, EndpointError, Exchange
from conformance.corpus import case
from conformance.reporting.terminal import SummaryLine
from conformance.requirements import judged_by
from conformance.run.expect import check_record, failure_message
from conformance.verdicts.status import Status
from conformance.verdicts.tally import CHECK_KEY, LATENCY_KEY, REQUIREMENTS_KEY, Tally
from conformance.wire import Matrix

STATE = judged_by(unchanged)
CANARY_CASES = ("batch-02", "batch-03", "batch-19", "batch-23")  # short sentences, few tokens
AT_THE_START = "state canary: the run's start"
AT_THE_END = "state canary: the run's end"


def canary_texts() -> list[str]:
    return [case(case_id).text for case_id in CANARY_CASES]


def canary_params() -> dict[str, Any]:
    return {"encoding_format": "float"}


def vectors_of(exchange: Exchange) -> tuple[Matrix | None, str]:
    """The answer's vectors, or None and why there are none."""
    if exchange.status != 200 or exchange.batch is None:
        return None, exchange.describe()[:200]
    try:
        return exchange.batch.matrix(), ""
    except ValueError as exc:
        return None, str(exc)


@dataclass(frozen=True)
class FirstAnswer:
    """The canary's first answer: its vectors, or why it carried none. Plain data for xdist."""

    vectors: Matrix | None
    problem: str = ""

    def to_json(self) -> dict[str, Any]:
        vectors = None if self.vectors is None else self.vectors.tolist()
        return {"vectors": vectors, "problem": self.problem}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> FirstAnswer | None:
        if data is None:
            return None
        vectors = data["vectors"]
        return cls(None if vectors is None else np.asarray(vectors), str(data["problem"]))


@dataclass(frozen=True)
class Asked:
    """One canary request of the controller's: the exchange (None: no answer), or the problem."""

    exchange: Exchange | None
    problem: str

    @property
    def seconds(self) -> float:
        return 0.0 if self.exchange is None else self.exchange.elapsed

    def timings(self) -> list[tuple[str, Any]]:
        """The request, timed, as a test's report carries its requests (``Tally.add_timings``)."""
        if self.exchange is None:
            return []
        status, inputs = self.exchange.status, len(CANARY_CASES)
        return [(LATENCY_KEY, [{"seconds": self.seconds, "status": status, "inputs": inputs}])]


def ask(client: EmbeddingsClient) -> tuple[FirstAnswer, Asked]:
    """Send the canary once (the controller's requests: at the start and at the end)."""
    try:
        exchange = client.embed(canary_texts(), **canary_params())
    except EndpointError as exc:
        problem = f"no answer: {exc}"
        return FirstAnswer(None, problem), Asked(None, problem)
    vectors, problem = vectors_of(exchange)
    return FirstAnswer(vectors, problem), Asked(exchange, problem)


def after_the_last_test(last_test: str, latency: list[dict[str, Any]]) -> str:
    """In words, what the run sent last: its last test, and that test's last request when the
    suite timed it."""
    if not last_test:
        return "at the run's end, after no test"
    words = f"at the run's end, after its last test {last_test}"
    if latency and latency[-1].get("test") == last_test:
        request = latency[-1]
        words += f" (its last request: {request['inputs']} input(s), HTTP {request['status']})"
    return words


@dataclass(frozen=True)
class EndOfRun:
    """The verdict of the canary asked at the run's end, as a test's report would carry it."""

    properties: list[tuple[str, Any]]
    passed: bool
    message: str  # the failure message ('' when it passed)
    seconds: float


def judge_at_the_end(
    first: FirstAnswer, client: EmbeddingsClient, after: str, atol: float
) -> EndOfRun:
    """Ask the canary again and judge its answer against the first."""
    again, asked = ask(client)
    if first.vectors is None:
        result = unmeasurable(f"{FIRST} carried no vectors: {first.problem}")
    else:
        result = unchanged(first.vectors, [CanaryAnswer(after, again.vectors, asked.problem)], atol)
    exchange = asked.exchange
    record = check_record(STATE, result, exchange, CANARY_CASES)
    properties = [(REQUIREMENTS_KEY, [STATE]), (CHECK_KEY, record.to_json())]
    message = "" if result.passed else failure_message(STATE, result, exchange, CANARY_CASES)
    return EndOfRun(properties + asked.timings(), result.passed, message, asked.seconds)


@dataclass
class StateCanary:
    """The canary as one run's controller keeps it (a worker keeps only the first answer): the
    first answer, the last test the run heard of, and the failure of the canary at the end."""

    first: FirstAnswer | None = None  # handed to xdist's workers with the settings
    last_test: str = ""
    failure: str = ""  # the end's failure message ('' when it passed or was not asked)

    def start(self, client: EmbeddingsClient, tally: Tally) -> None:
        """Before any test: state.unchanged's first answer."""
        self.first, asked = ask(client)
        tally.add_timings(AT_THE_START, asked.timings())

    def heard(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            self.last_test = report.nodeid

    def finish(self, client: EmbeddingsClient | None, tally: Tally, atol: float) -> None:
        """Ask again, now that every test of every worker has finished, and record the verdict
        like a test's; only when a test of state.unchanged ran (in play, chosen, and not
        deselected by -k, -m or the like)."""
        verdict = tally.verdicts.get(STATE)
        if self.first is None or client is None or verdict is None or not verdict.tests:
            return
        after = after_the_last_test(self.last_test, tally.latency)
        end = judge_at_the_end(self.first, client, after, atol)
        tally.add(
            AT_THE_END, end.properties, "passed" if end.passed else "failed", duration=end.seconds
        )
        tally.add_timings(AT_THE_END, end.properties)
        self.failure = end.message

    def failed(self, tally: Tally) -> bool:
        """The canary at the end failed the run (a known failure may have excused it)."""
        state = tally.verdicts.get(STATE)
        return bool(self.failure) and state is not None and state.status is Status.FAIL

    def summary(self, lines: Iterator[SummaryLine]) -> Iterator[SummaryLine]:
        """The terminal summary with the end's failure under its title: it was judged after
        the tests, so no test's report shows it."""
        if not self.failure:
            return lines
        failure: list[SummaryLine] = [("-", f"FAILED {AT_THE_END}", {})]
        failure += [("", line, {"red": True}) for line in self.failure.splitlines()]
        return chain([next(lines)], failure, lines)
