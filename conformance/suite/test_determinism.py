"""Determinism: the same request twice gives the same vectors."""

from __future__ import annotations

import pytest

from conformance.checks import compare
from conformance.client import Exchange
from conformance.expect import Expect
from conformance.options import Settings
from conformance.suite.fixtures import Answers


@pytest.mark.requirement("determinism.repeat")
def test_repeated_request_gives_same_vectors(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    batch_float: Exchange,
    batch_ids: list[str],
) -> None:
    again = answers.fresh(batch_float.request["input"], encoding_format="float")
    first = expect.matrix("determinism.repeat", batch_float, batch_ids)
    second = expect.matrix("determinism.repeat", again, batch_ids)
    result = compare.check_same_vectors(
        second, first, settings.tolerances.vector_atol, "repeat vs first"
    )
    expect("determinism.repeat", result, exchange=again, cases=batch_ids)
