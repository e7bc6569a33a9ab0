"""Output dimension: one fixed D per model, whatever the input length (the per-token bug).

The dimension of every vector in one answer is judged in ``test_answers.py``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import dimension
from conformance.client import Exchange
from conformance.run.expect import Expect
from conformance.suite.pytest_fixtures import Answers


@pytest.mark.requirement("dimension.fixed-across-lengths")
def test_dimension_does_not_grow_with_input(
    expect: Expect,
    answers: Answers,
    single: Callable[[str], Exchange],
    long_input: tuple[str, str],
) -> None:
    label, text = long_input  # cut to fit a short context
    short, long = single("one-token"), answers.get(text, encoding_format="float")
    short_batch = expect.ok(short, ["one-token"])
    long_batch = expect.ok(long, [label])
    result = dimension.fixed_across_lengths(short_batch.first_vector, long_batch.first_vector)
    expect(result, exchange=long)
