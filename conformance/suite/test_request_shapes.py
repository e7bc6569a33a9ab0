"""Request shapes real clients send: every row judged against its own input sent alone.

Generated shapes (seeded: --shape-seed; as many as --shape-examples beyond the fixed ones) and
bursts of concurrent requests, then one request at each of OpenAI's documented limits. The
server's answer to each input alone is fetched once and shared (``answers``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pytest
from hypothesis import HealthCheck, Phase, example, given, seed
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import HypothesisException
from hypothesis.strategies import SearchStrategy

from conformance.checks import CheckResult, batch, concurrency, status
from conformance.checks.status import is_refusal
from conformance.client import Exchange
from conformance.run.expect import Expect
from conformance.run.settings import Settings
from conformance.suite.pytest_fixtures import Answers
from conformance.suite.shape_fixtures import LimitRequest
from conformance.suite.shapes import (
    FIXED,
    Alone,
    Input,
    Pool,
    Shape,
    Staircase,
    alone_matrix,
    bursts,
    send_together,
    shapes,
)
from conformance.suite.strategies import seeded_only

Violation = tuple[CheckResult, Exchange, list[str]]


def explore(
    probe: Callable[[Any], None],
    strategy: SearchStrategy[Any],
    fixed: Sequence[Any],
    settings: Settings,
) -> None:
    """Run ``probe`` on each fixed example, then on ``--shape-examples`` drawn with
    ``--shape-seed``; a failure is shrunk and its smallest example tried last."""
    generated = settings.shape_examples > 0
    phases = (Phase.explicit, Phase.generate, Phase.shrink) if generated else (Phase.explicit,)
    run = given(strategy)(probe)
    for case in reversed(fixed):  # the example applied last runs first: fixed[0] first
        run = example(case)(run)
    run = hypothesis_settings(
        max_examples=max(1, settings.shape_examples),
        phases=phases,
        database=None,
        deadline=None,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )(run)
    with contextlib.suppress(AssertionError, HypothesisException), seeded_only():
        seed(settings.shape_seed)(run)()


def answered(
    expect: Expect, exchange: Exchange, inputs: Sequence[Input], alone: Alone, what: str
) -> CheckResult | None:
    """How ``exchange`` answered ``inputs`` (None: refused cleanly, though no input of it is
    refused alone); an input whose answer alone carries no vector ends the test, unmeasurable."""
    expected, unreadable = alone_matrix(inputs, alone)
    if expected is None:
        assert unreadable is not None
        reason = f"an input of the shape alone: {unreadable.describe()[:150]}"
        expect.unmeasurable(reason, unreadable)
    return batch.rows_answered(exchange.status, exchange.batch, expected, expect.vector_atol, what)


def alone_in(answers: Answers) -> Alone:
    """The server's answer to one text sent alone (asked once per text and process)."""
    return lambda text: answers.get(text, encoding_format="float")


def expect_with_the_last(
    expect: Expect, result: CheckResult, violations: Sequence[Violation]
) -> None:
    """Record ``result`` with the reproducer of the last violation: the smallest one tried."""
    _, exchange, ids = violations[-1] if violations else (None, None, None)
    expect(result, exchange=exchange, cases=ids)


def drawn(settings: Settings, fixed: int, tried: int, kind: str) -> str:
    return (
        f"{tried} {kind} tried ({fixed} fixed, the rest drawn with --shape-seed "
        f"{settings.shape_seed}, --shape-examples {settings.shape_examples})"
    )


@pytest.mark.requirement("batch.request-shapes")
def test_every_row_of_any_request_shape_is_its_input(
    expect: Expect, settings: Settings, answers: Answers, pool: Pool
) -> None:
    violations: list[Violation] = []
    refused: list[str] = []
    tried: list[Shape] = []

    alone = alone_in(answers)

    def probe(shape: Shape) -> None:
        inputs = shape.inputs(pool)
        tried.append(shape)
        exchange = answers.get([i.text for i in inputs], encoding_format="float")
        what = f"row i of {shape.describe(inputs)} vs input i sent alone"
        result = answered(expect, exchange, inputs, alone, what)
        if result is None:  # a limit lower than this request: the SHOULD at the limits says so
            refused.append(f"{shape!r} (HTTP {exchange.status})")
        elif not result.passed:
            violations.append((result, exchange, [i.id for i in inputs]))
            raise AssertionError(result.describe())

    explore(probe, shapes(), FIXED, settings)
    expect.note(drawn(settings, len(FIXED), len(tried), "request shapes"))
    if refused:
        expect.note(f"{len(refused)} cleanly refused, none of their inputs alone: {refused[:3]}")
    if len(refused) == len(tried):
        expect.unmeasurable(f"every request shape was refused: {refused[:3]}")
    result = batch.request_shapes(len(tried), [v[0] for v in violations])
    expect_with_the_last(expect, result, violations)


class Burstlike(Protocol):
    def inputs(self, pool: Pool) -> list[list[Input]]: ...


@pytest.mark.requirement("concurrency.mixed-bursts")
def test_requests_in_flight_together_each_get_their_own_rows(
    expect: Expect, settings: Settings, answers: Answers, pool: Pool
) -> None:
    violations: list[Violation] = []
    tried: list[Burstlike] = []

    alone = alone_in(answers)

    def send(texts: list[str]) -> Exchange:
        return answers.fresh(texts, encoding_format="float")

    def probe(burst: Burstlike) -> None:
        requests = burst.inputs(pool)
        tried.append(burst)
        for inputs in requests:  # every answer alone first: none of them in the burst
            alone_matrix(inputs, alone)
        sizes = [len(inputs) for inputs in requests]
        for r, (inputs, exchange) in enumerate(
            zip(requests, send_together(send, requests), strict=True)
        ):
            what = (
                f"row i of request {r} of {burst!r} (requests of {sizes} inputs sent at once) "
                "vs input i sent alone"
            )
            result = concurrency.in_a_burst(
                answered(expect, exchange, inputs, alone, what), exchange.status, what
            )
            if not result.passed:
                violations.append((result, exchange, [i.id for i in inputs]))
                raise AssertionError(result.describe())

    fixed = [Staircase()]
    explore(probe, bursts(), fixed, settings)
    expect.note(drawn(settings, len(fixed), len(tried), "bursts"))
    result = concurrency.mixed_bursts(len(tried), [v[0] for v in violations])
    expect_with_the_last(expect, result, violations)


LIMITS = ("2048-inputs", "32000-tokens")


@pytest.mark.requirement("batch.documented-limits")
@pytest.mark.parametrize("limit", LIMITS)
def test_a_request_at_a_documented_limit_is_answered_right(
    expect: Expect, answers: Answers, limit_requests: dict[str, LimitRequest], limit: str
) -> None:
    """A clean 4xx is UNSUPPORTED here (never a pass of the vectors it did not return), and
    batch.documented-limits-served's warning."""
    sent = limit_requests[limit]
    ids = [i.id for i in sent.inputs]
    if sent.exchange is None:
        expect(status.no_answer("an answer", f"{sent.name}: {sent.problem}"))
        return
    expect.refused(sent.exchange, sent.name, large=True)
    batched = expect.matrix(sent.exchange, ids)
    usage = sent.exchange.batch.usage if sent.exchange.batch is not None else None
    tokens = usage.prompt_tokens if usage is not None else None
    expect.note(f"{sent.name}: {len(ids)} inputs, {tokens} tokens as the server counted them")
    alone, unreadable = alone_matrix(sent.inputs, alone_in(answers))
    if alone is None:
        assert unreadable is not None
        expect.unmeasurable(f"an input alone: {unreadable.describe()[:150]}", unreadable)
    indices = [item.index for item in expect.ok(sent.exchange, ids).items]
    what = f"row i of {sent.name} vs input i sent alone"
    result = batch.documented_limits(indices, batched, alone, expect.vector_atol, what)
    expect(result, exchange=sent.exchange, cases=ids)


@pytest.mark.requirement("batch.documented-limits-served")
@pytest.mark.parametrize("limit", LIMITS)
def test_a_request_at_a_documented_limit_is_served(
    expect: Expect, limit_requests: dict[str, LimitRequest], limit: str
) -> None:
    sent = limit_requests[limit]
    code = sent.exchange.status if sent.exchange is not None else None
    if code is None or (code != 200 and not is_refusal(code, large=True)):
        answered = "no answer" if code is None else f"HTTP {code}"
        pytest.skip(f"not applicable: {sent.name} got {answered} (batch.documented-limits)")
    result = batch.documented_limits_served(code, f"{sent.name}, within OpenAI's limits")
    expect(result, exchange=sent.exchange)
