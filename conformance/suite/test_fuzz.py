"""Property-based fuzzing of the request schema (deterministic: fixed seed, bounded budget)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, reject, seed
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import HypothesisException

from conformance.checks import CheckResult, fuzz, status
from conformance.client import EmbeddingsClient, EndpointError, Exchange
from conformance.run.expect import Expect
from conformance.run.settings import Settings
from conformance.suite.strategies import Labelled, request_bodies, seeded_only

# The bodies sent depend on this seed, the strategies and --fuzz-examples only: not on this
# module's source, as hypothesis' derandomize would make them (any edit to the test reshuffled
# what a server was asked, and with it verdicts that a baseline compares across versions), nor
# on the constants of other local modules (seeded_only).
FUZZ_SEED = 20261201
# Requests hypothesis may send to shrink a failure, past the first failing one: a server that
# takes seconds per failure (a 500 after a timeout inside it) would otherwise keep the run for
# hypothesis' own shrinking limit, five minutes. Past it, only bodies already seen failing are
# replayed, from memory, so the smallest of them is still the one reported.
SHRINK_REQUESTS = 30


@pytest.mark.requirement("fuzz.robust")
def test_generated_requests_are_answered_correctly(
    expect: Expect, settings: Settings, client: EmbeddingsClient, dim: int
) -> None:
    violations: list[tuple[CheckResult, Exchange | None]] = []
    failed: dict[str, tuple[CheckResult, Exchange | None]] = {}  # by the body's repr
    shrinking = [0]  # requests sent since the first failure

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
        key = repr(body)
        if key in failed:
            violations.append(failed[key])
            raise AssertionError(failed[key][0].describe())
        if failed:
            if shrinking[0] == SHRINK_REQUESTS:
                reject()
            shrinking[0] += 1
        try:
            exchange = client.post(body)
        except EndpointError as exc:
            failed[key] = (status.no_answer("an answer", str(exc)), None)
        else:
            result = fuzz.check_answer_to(label, body, exchange.status, exchange.batch, dim)
            if result.passed:
                return
            failed[key] = (result, exchange)
        violations.append(failed[key])
        raise AssertionError(failed[key][0].describe())

    # Hypothesis replays the minimal failing example last: that is the one reported below.
    with contextlib.suppress(AssertionError, HypothesisException), seeded_only():
        probe()
    result = fuzz.robust(settings.fuzz_examples, [verdict for verdict, _ in violations])
    expect(result, exchange=violations[-1][1] if violations else None)
