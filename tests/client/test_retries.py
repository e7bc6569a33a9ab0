"""Retries after a 429 or 503: asked again and counted, or (``retry=False``) not asked again,
so the first answer can be judged (errors.recovers); the waits before them within the client's
retry budget."""

from __future__ import annotations

import time

from conformance.client import EmbeddingsClient, parse_endpoint
from conformance.client.http import RETRIES
from conformance.client.retry_budget import ALLOWANCE, REFILL, SHORT_WAIT, RetryBudget


def client_for(base_url: str, behaviour: str) -> EmbeddingsClient:
    return EmbeddingsClient(parse_endpoint(f"{base_url}/{behaviour}"), "hostile-model", None, 3.0)


def test_a_429_is_asked_again_and_every_retry_is_counted(hostile_server: str) -> None:
    client = client_for(hostile_server, "always-429")  # Retry-After: 0
    exchange = client.embed([[101, 102]])
    assert exchange.status == 429
    assert exchange.retries == RETRIES and client.retries == RETRIES
    client.embed([[101, 102]])
    assert client.retries == 2 * RETRIES  # over the client's life, for the suite to count


def test_a_request_sent_with_retry_false_gets_its_first_answer(hostile_server: str) -> None:
    client = client_for(hostile_server, "always-429")
    exchange = client.embed([[101, 102]], retry=False)
    assert exchange.status == 429 and exchange.retries == 0 and client.retries == 0
    assert client.post({"model": "m", "input": [[101]]}, retry=False).retries == 0
    assert client.retries == 0


def test_an_answer_that_needs_no_retry_counts_none(hostile_server: str) -> None:
    client = client_for(hostile_server, "always-429")
    exchange = client.embed(["a"])  # texts are answered well
    assert exchange.ok and exchange.retries == 0 and client.retries == 0


# --- the retry budget: a server that answers 503 again and again costs the run its waiting
# once, not on every request; a brief overload is still waited out ----------------------------

UNBUDGETED = 0.5 + 1.0 + 2.0  # seconds one request waited before the budget, per 503 burst


class Clock:
    """A monotonic clock that moves only when the client sleeps (or a test says so)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def budget(self) -> RetryBudget:
        """A budget of the default size whose waits pass no real time, recorded."""
        return RetryBudget(clock=self, sleep=self.sleep)


def budgeted_client(base_url: str, behaviour: str, budget: RetryBudget) -> EmbeddingsClient:
    client = client_for(base_url, behaviour)
    client.retry_budget = budget
    return client


def test_a_brief_overload_is_retried_after_the_backoff(hostile_server: str) -> None:
    clock = Clock()
    client = budgeted_client(hostile_server, "briefly-busy", clock.budget())
    answers = [client.embed(["a", "b"]) for _ in range(2)]  # one or both meet a 503 first
    assert all(exchange.ok for exchange in answers)  # the answer after the retry
    assert clock.waits in ([0.5], [0.5, 0.5])  # each after the first backoff, in full


def test_a_fresh_budget_waits_every_backoff_in_full(hostile_server: str) -> None:
    clock = Clock()
    client = budgeted_client(hostile_server, "always-503", clock.budget())
    exchange = client.embed([[101, 102]])  # 503, without Retry-After: the client's own backoff
    assert clock.waits == [0.5, 1.0, 2.0]
    assert exchange.status == 503 and not exchange.ok  # a 503 that stays is the answer
    assert exchange.retries == RETRIES


def test_the_budget_bounds_the_waiting_of_a_server_that_keeps_answering_503(
    hostile_server: str,
) -> None:
    clock = Clock()
    client = budgeted_client(hostile_server, "always-503", clock.budget())
    answers = [client.embed([[101, 102]]) for _ in range(30)]
    # Every request is still retried RETRIES times and still comes back a 503: only sooner.
    assert all(a.status == 503 and a.retries == RETRIES for a in answers)
    assert client.retries == 30 * RETRIES
    waited = sum(clock.waits)  # the fake clock moved by the waits alone: all of the run
    assert waited <= (ALLOWANCE + len(clock.waits) * SHORT_WAIT) / (1 - REFILL)
    assert waited < 30 * UNBUDGETED / 10
    assert min(clock.waits) == SHORT_WAIT  # once spent: retried after the short wait


def test_the_budget_refills_with_the_runs_time(hostile_server: str) -> None:
    clock = Clock()
    client = budgeted_client(hostile_server, "always-503", clock.budget())
    for _ in range(5):
        client.embed([[101, 102]])
    assert clock.waits[-1] == SHORT_WAIT  # spent
    clock.now += 2 * UNBUDGETED / REFILL  # a long stretch of answers that needed no retry
    clock.waits.clear()
    client.embed([[101, 102]])
    assert clock.waits == [0.5, 1.0, 2.0]  # earned back, up to one whole backoff


def test_a_retry_after_the_server_names_is_waited_even_with_the_budget_spent(
    hostile_server: str,
) -> None:
    client = budgeted_client(hostile_server, "rate-limited", RetryBudget(0.0, 0.0))
    started = time.monotonic()
    answers = [client.embed(["a", "b"]) for _ in range(2)]  # one meets a 429, Retry-After: 1
    assert all(exchange.ok for exchange in answers)
    assert time.monotonic() - started >= 1.0  # a rate limiter paces the run: obeyed


def test_a_spent_budget_bounds_the_real_time_a_run_waits(hostile_server: str) -> None:
    client = budgeted_client(hostile_server, "always-503", RetryBudget(allowance=1.0))
    started = time.monotonic()
    answers = [client.embed([[101, 102]]) for _ in range(3)]
    elapsed = time.monotonic() - started
    assert all(a.status == 503 and a.retries == RETRIES for a in answers)
    assert elapsed < 5.0 < 3 * UNBUDGETED  # ~1.3 s of backoff, then short waits


def test_waits_of_threads_at_the_same_time_are_charged_once() -> None:
    now = [0.0]
    budget = RetryBudget(allowance=1.0, refill=0.0, clock=lambda: now[0])
    assert [budget.grant(0.5) for _ in range(8)] == [0.5] * 8  # side by side: 0.5 s charged
    now[0] += 0.5
    assert budget.grant(0.5) == 0.5  # the other half second
    now[0] += 0.5
    assert budget.grant(0.5) == SHORT_WAIT  # spent
