"""Input forms: a string against a one-element array, token ids and arrays of token ids
(optional features).

A string and an array of strings are judged in ``test_answers.py``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import envelope, vectors
from conformance.client import Exchange
from conformance.expect import Expect
from conformance.references import reference_cases
from conformance.suite.pytest_fixtures import Answers, Tokenizer

STRING_CASE = "batch-02"  # a core corpus case
TOKEN_CASES = ["en-sent-01", "zh-01", "code-py-01"]  # reference corpus cases
TEXTS = {c.id: c.text for c in reference_cases()}
# Used only when no tokenizer is known: plausible ids inside any real vocabulary.
PROBE_IDS = [[1000, 2000, 3000], [1500, 2500], [1200, 2200, 3200, 4200]]


def token_answer(
    expect: Expect, requirement_id: str, answers: Answers, ids: object, count: int, dim: int
) -> Exchange:
    """The answer to a token-id input: UNSUPPORTED on a clean 4xx, else a valid envelope."""
    exchange = answers.get(ids, encoding_format="float")
    expect.refused(requirement_id, exchange, "token-id input")
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
    tokenizer: Tokenizer | None,
    ids: list[str],
) -> None:
    """Compare with the texts' vectors when the ids came from a tokenizer, else only check
    that the same ids give the same vectors again (and say so)."""
    if tokenizer is not None:
        texts = answers.get([TEXTS[i] for i in ids], encoding_format="float")
        want = expect.matrix(requirement_id, texts, ids)
        what = f"token ids from {tokenizer.origin} vs their text"
        expect.same_vectors(requirement_id, exchange, ids, want, what)
        if tokenizer.judged_server:
            expect.note(requirement_id, f"token ids from {tokenizer.origin}: not the truth")
        return
    got = expect.matrix(requirement_id, exchange, ids)
    again = answers.fresh(exchange.request["input"])
    expect.same_vectors(requirement_id, again, ids, got, "repeat")
    expect.note(
        requirement_id,
        "valid and deterministic, but not compared with text: no tokenizer known (no "
        "reference that recorded token ids, no /tokenize route beside /v1)",
    )


def token_ids(tokenizer: Tokenizer | None, ids: list[str]) -> list[list[int]]:
    """The cases' token ids, or (no tokenizer) plausible ids inside any real vocabulary."""
    if tokenizer is None:
        return PROBE_IDS[: len(ids)]
    found = [tokenizer.ids(case_id) for case_id in ids]
    if any(not tokens for tokens in found):
        pytest.fail(f"{tokenizer.origin} gave no token ids for {ids}", pytrace=False)
    return [tokens or [] for tokens in found]


@pytest.mark.requirement("input.string-same-as-array")
def test_string_and_one_element_array_agree(
    expect: Expect, single: Callable[[str], Exchange], answers: Answers
) -> None:
    requirement = "input.string-same-as-array"
    as_string = single(STRING_CASE)
    as_array = answers.get([as_string.request["input"]], encoding_format="float")
    want = expect.matrix(requirement, as_string, [STRING_CASE])
    what = "the text as a one-element array vs as a string"
    expect.same_vectors(requirement, as_array, [STRING_CASE], want, what)


@pytest.mark.requirement("input.token-ids")
def test_token_ids_embed_like_their_text(
    expect: Expect, answers: Answers, tokenizer: Tokenizer | None, dim: int
) -> None:
    ids = TOKEN_CASES[:1]
    (tokens,) = token_ids(tokenizer, ids)
    exchange = token_answer(expect, "input.token-ids", answers, tokens, 1, dim)
    compare_or_repeat(expect, "input.token-ids", answers, exchange, tokenizer, ids)


@pytest.mark.requirement("input.token-id-arrays")
def test_token_id_arrays_embed_like_their_texts(
    expect: Expect, answers: Answers, tokenizer: Tokenizer | None, dim: int
) -> None:
    tokens = token_ids(tokenizer, TOKEN_CASES)
    exchange = token_answer(expect, "input.token-id-arrays", answers, tokens, len(tokens), dim)
    compare_or_repeat(expect, "input.token-id-arrays", answers, exchange, tokenizer, TOKEN_CASES)
