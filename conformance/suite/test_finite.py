"""Finite, non-zero vectors: for ordinary text, whitespace-only input and unusual unicode."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import vectors
from conformance.client import EmbeddingBatch, Exchange
from conformance.corpus import cases_tagged
from conformance.expect import Expect, unsupported

ODD_CASES = [c.id for c in cases_tagged("odd")]


def odd_answer(
    expect: Expect, requirement_id: str, exchange: Exchange, case_id: str
) -> EmbeddingBatch:
    """A clean 4xx for an odd input is a legitimate choice (UNSUPPORTED); anything else but a
    200 envelope fails."""
    if 400 <= exchange.status < 500:
        unsupported(f"the server rejected input {case_id!r} with HTTP {exchange.status}")
    return expect.ok(requirement_id, exchange, [case_id])


@pytest.mark.requirement("finite.values")
def test_batch_is_finite(expect: Expect, batch_float: Exchange, batch_ids: list[str]) -> None:
    batch = expect.ok("finite.values", batch_float, batch_ids)
    expect(
        "finite.values", vectors.check_finite(batch.vectors), exchange=batch_float, cases=batch_ids
    )


@pytest.mark.requirement("finite.values")
@pytest.mark.parametrize("case_id", ODD_CASES)
def test_odd_input_is_finite(
    expect: Expect, single: Callable[[str], Exchange], case_id: str
) -> None:
    exchange = single(case_id)
    batch = odd_answer(expect, "finite.values", exchange, case_id)
    expect("finite.values", vectors.check_finite(batch.vectors), exchange=exchange, cases=[case_id])


@pytest.mark.requirement("finite.nonzero")
def test_batch_is_nonzero(expect: Expect, batch_float: Exchange, batch_ids: list[str]) -> None:
    batch = expect.ok("finite.nonzero", batch_float, batch_ids)
    expect(
        "finite.nonzero",
        vectors.check_nonzero(batch.vectors),
        exchange=batch_float,
        cases=batch_ids,
    )


@pytest.mark.requirement("finite.nonzero")
@pytest.mark.parametrize("case_id", ODD_CASES)
def test_odd_input_is_nonzero(
    expect: Expect, single: Callable[[str], Exchange], case_id: str
) -> None:
    exchange = single(case_id)
    batch = odd_answer(expect, "finite.nonzero", exchange, case_id)
    expect(
        "finite.nonzero", vectors.check_nonzero(batch.vectors), exchange=exchange, cases=[case_id]
    )
