"""Output dimension: one fixed D per model, whatever the input length."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import vectors
from conformance.client import Exchange
from conformance.expect import Expect


@pytest.mark.requirement("dimension.consistent")
def test_same_dimension_for_every_input(
    expect: Expect, batch_float: Exchange, batch_ids: list[str]
) -> None:
    batch = expect.ok("dimension.consistent", batch_float, batch_ids)
    expect(
        "dimension.consistent",
        vectors.check_consistent_dimension(batch.vectors),
        exchange=batch_float,
        cases=batch_ids,
    )


@pytest.mark.requirement("dimension.fixed-across-lengths")
def test_dimension_does_not_grow_with_input(
    expect: Expect, single: Callable[[str], Exchange]
) -> None:
    short, long = single("one-token"), single("long-200")
    short_batch = expect.ok("dimension.fixed-across-lengths", short, ["one-token"])
    long_batch = expect.ok("dimension.fixed-across-lengths", long, ["long-200"])
    result = vectors.check_fixed_across_lengths(short_batch.first_vector, long_batch.first_vector)
    expect("dimension.fixed-across-lengths", result, exchange=long)


@pytest.mark.requirement("dimension.expected")
def test_dimension_is_the_expected_one(
    expect: Expect, expected_dim: int | None, batch_float: Exchange, batch_ids: list[str]
) -> None:
    if expected_dim is None:
        pytest.skip("no --expect-dim given and no reference to take it from")
    batch = expect.ok("dimension.expected", batch_float, batch_ids)
    expect(
        "dimension.expected",
        vectors.check_expected_dimension(batch.vectors, expected_dim),
        exchange=batch_float,
        cases=batch_ids,
    )
