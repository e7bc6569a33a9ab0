"""Output dimension: one fixed D per model, whatever the input length (the per-token bug).

The dimension of every vector in one answer is judged in ``test_answers.py``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import vectors
from conformance.client import Exchange
from conformance.expect import Expect


@pytest.mark.requirement("dimension.fixed-across-lengths")
def test_dimension_does_not_grow_with_input(
    expect: Expect, single: Callable[[str], Exchange]
) -> None:
    short, long = single("one-token"), single("long-200")
    short_batch = expect.ok("dimension.fixed-across-lengths", short, ["one-token"])
    long_batch = expect.ok("dimension.fixed-across-lengths", long, ["long-200"])
    result = vectors.check_fixed_across_lengths(short_batch.first_vector, long_batch.first_vector)
    expect("dimension.fixed-across-lengths", result, exchange=long)
