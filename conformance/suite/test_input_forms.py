"""Input forms beyond strings: token ids and arrays of token ids (optional features).

A string and an array of strings are judged in ``test_answers.py``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import envelope, vectors
from conformance.client import Exchange
from conformance.corpus import case
from conformance.expect import Expect, unsupported
from conformance.suite.pytest_fixtures import Answers

TOKEN_CASES = ["batch-02", "batch-04", "batch-10"]
# Used only when no tokenizer is known: plausible ids inside any real vocabulary.
PROBE_IDS = [[1000, 2000, 3000], [1500, 2500], [1200, 2200, 3200, 4200]]

Tokenizer = Callable[[str], list[int]] | None


def token_answer(
    expect: Expect, requirement_id: str, answers: Answers, ids: object, count: int, dim: int
) -> Exchange:
    """The answer to a token-id input: UNSUPPORTED on a clean 4xx, else a valid envelope."""
    exchange = answers.get(ids, encoding_format="float")
    if 400 <= exchange.status < 500:
        unsupported(f"token-id input cleanly rejected with HTTP {exchange.status}")
    batch = expect.ok(requirement_id, exchange)
    expect(requirement_id, envelope.check_item_count(batch, count), exchange=exchange)
    expect(
        requirement_id, vectors.check_consistent_dimension(batch.vectors, dim), exchange=exchange
    )
    return exchange


def compare_or_repeat(
    expect: Expect,
    requirement_id: str,
    answers: Answers,
    exchange: Exchange,
    texts: Exchange | None,
    ids: list[str],
) -> None:
    """Compare with the texts' vectors when the ids came from a tokenizer, else only check
    that the same ids give the same vectors again (and say so)."""
    if texts is not None:
        want = expect.matrix(requirement_id, texts, ids)
        expect.same_vectors(requirement_id, exchange, ids, want, "token ids vs their text")
        return
    got = expect.matrix(requirement_id, exchange, ids)
    again = answers.fresh(exchange.request["input"])
    expect.same_vectors(requirement_id, again, ids, got, "repeat")
    expect.note(
        requirement_id,
        "valid and deterministic, but not compared with text: no "
        "tokenizer known (no /tokenize route beside /v1)",
    )


@pytest.mark.requirement("input.token-ids")
def test_token_ids_embed_like_their_text(
    expect: Expect, answers: Answers, tokenizer: Tokenizer, dim: int
) -> None:
    text = case(TOKEN_CASES[0]).text
    ids = tokenizer(text) if tokenizer else PROBE_IDS[0]
    exchange = token_answer(expect, "input.token-ids", answers, ids, 1, dim)
    texts = answers.get(text, encoding_format="float") if tokenizer else None
    compare_or_repeat(expect, "input.token-ids", answers, exchange, texts, TOKEN_CASES[:1])


@pytest.mark.requirement("input.token-id-arrays")
def test_token_id_arrays_embed_like_their_texts(
    expect: Expect, answers: Answers, tokenizer: Tokenizer, dim: int
) -> None:
    texts = [case(case_id).text for case_id in TOKEN_CASES]
    ids = [tokenizer(t) for t in texts] if tokenizer else PROBE_IDS
    exchange = token_answer(expect, "input.token-id-arrays", answers, ids, len(ids), dim)
    text_answer = answers.get(texts, encoding_format="float") if tokenizer else None
    compare_or_repeat(expect, "input.token-id-arrays", answers, exchange, text_answer, TOKEN_CASES)
