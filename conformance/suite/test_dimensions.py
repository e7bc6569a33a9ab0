"""The optional 'dimensions' parameter: honoured exactly, or cleanly refused; never ignored."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks import CheckResult, dimensions, errors, vectors
from conformance.client import Exchange
from conformance.expect import Expect, unsupported
from conformance.options import Settings
from conformance.suite.fixtures import Answers

SIZES = (32, 128)
SAMPLE = 8  # texts per request: enough to see every row, cheap to embed
INVALID: tuple[Any, ...] = (0, -1, "12", 12.5, True, "native+1")


def reduced_answer(
    expect: Expect,
    requirement_id: str,
    answers: Answers,
    batch_float: Exchange,
    size: int,
    dim: int,
) -> Exchange:
    if size >= dim:
        pytest.skip(f"dimensions={size} is not below the native dimension {dim}")
    texts = batch_float.request["input"][:SAMPLE]
    exchange = answers.get(texts, encoding_format="float", dimensions=size)
    if 400 <= exchange.status < 500:
        unsupported(f"dimensions={size} cleanly rejected with HTTP {exchange.status}")
    expect.ok(requirement_id, exchange)
    return exchange


@pytest.mark.requirement("dimensions.honoured")
@pytest.mark.parametrize("size", SIZES)
def test_dimensions_gives_that_many_entries(
    expect: Expect,
    answers: Answers,
    batch_float: Exchange,
    batch_ids: list[str],
    size: int,
    dim: int,
) -> None:
    exchange = reduced_answer(expect, "dimensions.honoured", answers, batch_float, size, dim)
    assert exchange.batch is not None
    result = vectors.check_expected_dimension(exchange.batch.vectors, size)
    if not result.passed and all(len(v) == dim for v in exchange.batch.vectors if v is not None):
        result = CheckResult(
            False,
            dim,
            f"== {size}",
            None,
            f"full {dim}-entry vectors: 'dimensions' silently ignored",
            0,
        )
    expect("dimensions.honoured", result, exchange=exchange, cases=batch_ids[:SAMPLE])


@pytest.mark.requirement("dimensions.renormalized")
@pytest.mark.parametrize("size", SIZES)
def test_dimensions_is_the_renormalized_prefix(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    batch_float: Exchange,
    batch_ids: list[str],
    size: int,
    dim: int,
) -> None:
    requirement = "dimensions.renormalized"
    exchange = reduced_answer(expect, requirement, answers, batch_float, size, dim)
    ids = batch_ids[:SAMPLE]
    reduced = expect.matrix(requirement, exchange, ids)
    if reduced.shape[1] != size:
        pytest.skip(
            f"vectors have {reduced.shape[1]} entries, not {size} (see dimensions.honoured)"
        )
    full = expect.matrix(requirement, batch_float, batch_ids)[:SAMPLE]
    result = dimensions.check_renormalized(reduced, full, size, settings.tolerances.vector_atol)
    expect(requirement, result, exchange=exchange, cases=ids)


@pytest.mark.requirement("dimensions.invalid-rejected")
@pytest.mark.parametrize("value", INVALID, ids=[repr(v) for v in INVALID])
def test_invalid_dimensions_are_rejected(
    expect: Expect, answers: Answers, value: Any, dim: int
) -> None:
    sent = dim + 1 if value == "native+1" else value
    exchange = answers.get("hello", encoding_format="float", dimensions=sent)
    expect(
        "dimensions.invalid-rejected",
        errors.check_rejected(exchange.status, f"dimensions={sent!r}"),
        exchange=exchange,
    )
