"""The optional 'dimensions' parameter: honoured exactly, or cleanly refused; never ignored."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks import dimensions
from conformance.client import Exchange
from conformance.requirements import judged_by
from conformance.run.expect import Expect
from conformance.run.settings import Settings
from conformance.suite.pytest_fixtures import Answers

SIZES = (32, 128)
SAMPLE = 8  # texts per request: enough to see every row, cheap to embed
# "12" and true: arguable; 0: hygiene, read as absent by lax servers (bad requests)
INVALID: tuple[Any, ...] = (-1, 12.5, "native+1")


Reduced = tuple[Exchange, int, list[str]]  # the answer, the size asked for, its case ids


@pytest.fixture(params=SIZES)
def reduced(
    request: pytest.FixtureRequest,
    expect: Expect,
    answers: Answers,
    batch_float: Exchange,
    batch_ids: list[str],
    dim: int,
) -> Reduced:
    """The first SAMPLE batch texts asked for with ``dimensions``; UNSUPPORTED on a clean 4xx."""
    size: int = request.param
    if size >= dim:
        pytest.skip(f"dimensions={size} is not below the native dimension {dim}")
    texts = batch_float.request["input"][:SAMPLE]
    exchange = answers.get(texts, encoding_format="float", dimensions=size)
    expect.refused(exchange, f"dimensions={size}")
    return exchange, size, batch_ids[:SAMPLE]


@pytest.mark.requirement("dimensions.honoured")
def test_dimensions_gives_that_many_entries(expect: Expect, reduced: Reduced, dim: int) -> None:
    exchange, size, ids = reduced
    batch = expect.ok(exchange, ids)
    result = dimensions.honoured(batch.vectors, size, dim)
    expect(result, exchange=exchange, cases=ids)


@pytest.mark.requirement("dimensions.renormalized")
def test_dimensions_is_the_renormalized_prefix(
    expect: Expect,
    settings: Settings,
    reduced: Reduced,
    batch_float: Exchange,
    normalized_expected: bool,
) -> None:
    exchange, size, ids = reduced
    shortened = expect.matrix(exchange, ids)
    if shortened.shape[1] != size:
        what = f"vectors have {shortened.shape[1]} entries, not {size}"
        expect.unmeasurable(what, exchange, ids, because=(judged_by(dimensions.honoured),))
    full = expect.matrix(batch_float, ids)[: len(ids)]
    atol = settings.tolerances.vector_atol
    result = dimensions.renormalized(shortened, full, size, atol, normalized=normalized_expected)
    expect(result, exchange=exchange, cases=ids)


@pytest.mark.requirement("dimensions.invalid-rejected")
@pytest.mark.parametrize("value", INVALID, ids=[repr(v) for v in INVALID])
def test_invalid_dimensions_are_rejected(
    expect: Expect, answers: Answers, value: Any, dim: int
) -> None:
    sent = dim + 1 if value == "native+1" else value
    exchange = answers.get("hello", encoding_format="float", dimensions=sent)
    expect(dimensions.invalid_rejected(exchange.status, f"dimensions={sent!r}"), exchange=exchange)


@pytest.mark.requirement("dimensions.native")
def test_the_models_own_dimension_is_honoured(
    expect: Expect, answers: Answers, batch_float: Exchange, batch_ids: list[str], dim: int
) -> None:
    """Held only against a server that takes a smaller value (UNSUPPORTED when it refuses
    the parameter): the model's own dimension then gets the full vectors, those of the same
    request without the parameter (so that a batch's rounding is not judged here)."""
    texts, ids = batch_float.request["input"][:SAMPLE], batch_ids[:SAMPLE]
    smaller = answers.get(texts, encoding_format="float", dimensions=SIZES[0])
    expect.refused(smaller, f"dimensions={SIZES[0]}")
    exchange = answers.get(texts, encoding_format="float", dimensions=dim)
    full = expect.matrix(answers.get(texts, encoding_format="float"), ids)
    answer = expect.matrix(exchange, ids) if exchange.status == 200 else None
    result = dimensions.native(exchange.status, answer, full, expect.vector_atol)
    expect(result, exchange=exchange, cases=ids)
