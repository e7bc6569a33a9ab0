"""Concurrency isolation: simultaneous requests each get their own answer."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.checks import concurrency
from conformance.client import Exchange
from conformance.run.expect import Expect
from conformance.run.settings import Settings
from conformance.suite.pytest_fixtures import Answers

CONCURRENCY = 16


@pytest.mark.requirement("concurrency.isolation")
def test_concurrent_requests_get_their_own_vectors(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    singles: list[Exchange],
    batch_ids: list[str],
) -> None:
    ids = batch_ids[:CONCURRENCY]
    serial = expect.rows(singles[:CONCURRENCY], ids)
    start = threading.Barrier(CONCURRENCY)

    def send(exchange: Exchange) -> Exchange:
        start.wait()  # release all requests at once
        return answers.fresh(exchange.request["input"], encoding_format="float")

    with ThreadPoolExecutor(CONCURRENCY) as pool:
        concurrent = list(pool.map(send, singles[:CONCURRENCY]))
    together = expect.rows(concurrent, ids)
    what = f"{CONCURRENCY} concurrent vs serial answers"
    result = concurrency.isolation(together, serial, settings.tolerances.vector_atol, what)
    worst = concurrent[result.index] if result.index is not None else None
    expect(result, exchange=worst, cases=ids)
