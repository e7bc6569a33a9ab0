"""Determinism: the same request twice gives the same vectors."""

from __future__ import annotations

import pytest

from conformance.checks import determinism
from conformance.client import Exchange
from conformance.run.expect import Expect
from conformance.suite.pytest_fixtures import Answers


@pytest.mark.requirement("determinism.repeat")
def test_repeated_request_gives_same_vectors(
    expect: Expect, answers: Answers, batch_float: Exchange, batch_ids: list[str]
) -> None:
    again = answers.fresh(batch_float.request["input"], encoding_format="float")
    first = expect.matrix(batch_float, batch_ids)
    result = determinism.repeat(expect.matrix(again, batch_ids), first, expect.vector_atol)
    expect(result, exchange=again, cases=batch_ids)
