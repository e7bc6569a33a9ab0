"""Property-based fuzzing of the request schema (deterministic: fixed seed, bounded budget)."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import HypothesisException

from conformance.checks.fuzzing import check_labelled_answer
from conformance.checks.result import CheckResult
from conformance.client import EmbeddingsClient, EndpointError, Exchange
from conformance.expect import Expect
from conformance.options import Settings
from conformance.suite.strategies import Labelled, request_bodies


def input_count(body: dict[str, Any]) -> int:
    return len(body["input"]) if isinstance(body.get("input"), list) else 1


def envelope_is_valid(exchange: Exchange, dim: int) -> bool:
    """A 200 envelope whose every vector is finite and of the native dimension."""
    if not exchange.ok or exchange.batch is None:
        return False
    vectors = exchange.batch.vectors
    return all(v is not None and len(v) == dim and bool(np.isfinite(v).all()) for v in vectors)


@pytest.mark.requirement("fuzz.robust")
def test_generated_requests_are_answered_correctly(
    expect: Expect, settings: Settings, client: EmbeddingsClient, dim: int
) -> None:
    violations: list[tuple[CheckResult, Exchange | None]] = []

    @hypothesis_settings(
        max_examples=settings.fuzz_examples,
        derandomize=True,
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
            violations.append((CheckResult(False, "no answer", "an answer", None, str(exc)), None))
            raise AssertionError(str(exc)) from None
        count_ok = exchange.batch is not None and len(exchange.batch.items) == input_count(body)
        result = check_labelled_answer(
            label, exchange.status, envelope_is_valid(exchange, dim), count_ok, f"{str(body)[:120]}"
        )
        if not result.passed:
            violations.append((result, exchange))
            raise AssertionError(result.describe())

    # Hypothesis replays the minimal failing example last: that is the one reported below.
    with contextlib.suppress(AssertionError, HypothesisException):
        probe()
    if violations:
        result, exchange = violations[-1]
        expect("fuzz.robust", result, exchange=exchange)
    expect(
        "fuzz.robust",
        CheckResult(
            True,
            settings.fuzz_examples,
            "examples without a violation",
            None,
            "generated request bodies",
        ),
    )
