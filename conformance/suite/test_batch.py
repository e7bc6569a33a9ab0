"""Batch invariance: a text's vector does not depend on its batch or its position in it."""

from __future__ import annotations

import pytest

from conformance.checks import batch
from conformance.client import Exchange
from conformance.references import Recording
from conformance.run.expect import Expect
from conformance.suite.pytest_fixtures import Answers
from conformance.suite.reference_corpus import large_batch_cases

DUPLICATE_AT = (0, 9, 17, 30)  # where the first batch text appears again in the batch of 32


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
    alone = expect.rows(singles, batch_ids)
    batched = expect.matrix(batch_float, batch_ids)
    result = batch.single_vs_batch(batched, alone, expect.vector_atol, "in a batch of 32 vs alone")
    expect(result, exchange=batch_float, cases=batch_ids)


@pytest.mark.requirement("batch.permutation")
def test_permuted_batch_permutes_rows(
    expect: Expect, answers: Answers, batch_float: Exchange, batch_ids: list[str]
) -> None:
    order = permutation(len(batch_ids))
    texts = batch_float.request["input"]
    permuted_ids = [batch_ids[i] for i in order]
    exchange = answers.get([texts[i] for i in order], encoding_format="float")
    original = expect.matrix(batch_float, batch_ids)
    permuted = expect.matrix(exchange, permuted_ids)
    what = "row i of the permuted batch vs its text in the original"
    result = batch.permutation(permuted, original[order], expect.vector_atol, what)
    expect(result, exchange=exchange, cases=permuted_ids)


@pytest.mark.requirement("batch.large")
def test_every_row_of_a_large_batch_is_its_inputs(
    expect: Expect, answers: Answers, reference: Recording | None, context: int | None
) -> None:
    """One request of 128 short corpus inputs, row by row, against each input sent alone (the
    server's own answers, shared with the tests that asked them already): which vector is
    right is reference.agreement's to judge, which row holds it is this one's."""
    cases = large_batch_cases(reference, context)
    ids = [c.id for c in cases]
    exchange = answers.get([c.text for c in cases], encoding_format="float")
    expect.refused(exchange, f"{len(cases)} inputs in one request", large=True)
    batched = expect.matrix(exchange, ids)
    alone = expect.rows([answers.get(c.text, encoding_format="float") for c in cases], ids)
    what = f"row i of one request of {len(cases)} inputs vs input i sent alone"
    result = batch.large(batched, alone, expect.vector_atol, what)
    expect(result, exchange=exchange, cases=ids)


@pytest.mark.requirement("batch.duplicates")
def test_duplicates_in_a_batch_keep_their_rows(
    expect: Expect,
    answers: Answers,
    batch_float: Exchange,
    singles: list[Exchange],
    batch_ids: list[str],
) -> None:
    """The batch of 32 with its first text also at positions 9, 17 and 30: every row is its
    own text's vector (as sent alone)."""
    order = [0 if i in DUPLICATE_AT else i for i in range(len(batch_ids))]
    texts = batch_float.request["input"]
    ids = [batch_ids[i] for i in order]
    exchange = answers.get([texts[i] for i in order], encoding_format="float")
    alone = expect.rows(singles, batch_ids)[order]
    actual = expect.matrix(exchange, ids)
    what = f"row i of a batch with {ids[0]!r} at positions {list(DUPLICATE_AT)} vs its text alone"
    expect(batch.duplicates(actual, alone, expect.vector_atol, what), exchange=exchange, cases=ids)
