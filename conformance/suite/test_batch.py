"""Batch invariance: a text's vector does not depend on its batch or its position in it."""

from __future__ import annotations

import pytest

from conformance.client import Exchange
from conformance.expect import Expect
from conformance.suite.pytest_fixtures import Answers


def permutation(count: int) -> list[int]:
    """A fixed permutation, so failures reproduce: i -> (step*i + 3) mod count. Unlike a
    reversal, it does not commute with reversing rows, so a server that returns every batch
    reversed cannot pass by being consistently wrong."""
    step = 5 if count % 5 else 7  # coprime with count: a bijection
    return [(step * i + 3) % count for i in range(count)]


@pytest.mark.requirement("batch.single-vs-batch")
def test_single_equals_batch(
    expect: Expect, batch_float: Exchange, singles: list[Exchange], batch_ids: list[str]
) -> None:
    alone = expect.rows("batch.single-vs-batch", singles, batch_ids)
    what = "in a batch of 32 vs alone"
    expect.same_vectors("batch.single-vs-batch", batch_float, batch_ids, alone, what)


@pytest.mark.requirement("batch.permutation")
def test_permuted_batch_permutes_rows(
    expect: Expect, answers: Answers, batch_float: Exchange, batch_ids: list[str]
) -> None:
    order = permutation(len(batch_ids))
    texts = batch_float.request["input"]
    permuted_ids = [batch_ids[i] for i in order]
    permuted = answers.get([texts[i] for i in order], encoding_format="float")
    original = expect.matrix("batch.permutation", batch_float, batch_ids)
    what = "row i of the permuted batch vs its text in the original"
    expect.same_vectors("batch.permutation", permuted, permuted_ids, original[order], what)
