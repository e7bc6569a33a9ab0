"""Property-based fuzzing of the request schema (deterministic: fixed seed, bounded budget)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, seed
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import HypothesisException

from conformance.checks import CheckResult, fuzz, status
from conformance.client import EmbeddingsClient, EndpointError, Exchange
from conformance.run.expect import Expect
from conformance.run.settings import Settings
from conformance.suite.strategies import Labelled, request_bodies

# The bodies sent depend on this seed, the strategies and --fuzz-examples only: not on this
# module's source, as hypothesis' derandomize would make them (any edit to the test reshuffled
# what a server was asked, and with it verdicts that a baseline compares across versions).
FUZZ_SEED = 20261201


@pytest.mark.requirement("fuzz.robust")
def test_generated_requests_are_answered_correctly(
    expect: Expect, settings: Settings, client: EmbeddingsClient, dim: int
) -> None:
    violations: list[tuple[CheckResult, Exchange | None]] = []

    @seed(FUZZ_SEED)
    @hypothesis_settings(
        max_examples=settings.fuzz_examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(request_bodies(client.model))
    def probe(labelled: Labelled) -> None:
        label, body = labelled
        try:
            exchange = client.post(body)
        except EndpointError as exc:
            violations.append((status.no_answer("an answer", str(exc)), None))
            raise AssertionError(str(exc)) from None
        result = fuzz.check_answer_to(label, body, exchange.status, exchange.batch, dim)
        if not result.passed:
            violations.append((result, exchange))
            raise AssertionError(result.describe())

    # Hypothesis replays the minimal failing example last: that is the one reported below.
    with contextlib.suppress(AssertionError, HypothesisException):
        probe()
    result = fuzz.robust(settings.fuzz_examples, [verdict for verdict, _ in violations])
    expect(result, exchange=violations[-1][1] if violations else None)
