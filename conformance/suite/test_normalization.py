"""Unit L2 norm, when the model's output is normalized (the default expectation)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import vectors
from conformance.client import Exchange
from conformance.expect import Expect
from conformance.options import Settings


@pytest.fixture(autouse=True)
def _normalized_output_expected(normalized_expected: bool) -> None:
    if not normalized_expected:
        pytest.skip("the model's output is not normalized (--expect-normalized, or the reference)")


@pytest.mark.requirement("normalization.unit-norm")
def test_batch_has_unit_norm(
    expect: Expect, settings: Settings, batch_float: Exchange, batch_ids: list[str]
) -> None:
    batch = expect.ok("normalization.unit-norm", batch_float, batch_ids)
    expect(
        "normalization.unit-norm",
        vectors.check_unit_norm(batch.vectors, settings.tolerances.norm_atol),
        exchange=batch_float,
        cases=batch_ids,
    )


@pytest.mark.requirement("normalization.unit-norm")
@pytest.mark.parametrize("case_id", ["one-token", "long-200"])
def test_length_extremes_have_unit_norm(
    expect: Expect, settings: Settings, single: Callable[[str], Exchange], case_id: str
) -> None:
    exchange = single(case_id)
    batch = expect.ok("normalization.unit-norm", exchange, [case_id])
    expect(
        "normalization.unit-norm",
        vectors.check_unit_norm(batch.vectors, settings.tolerances.norm_atol),
        exchange=exchange,
        cases=[case_id],
    )
