"""Input forms: a string against a one-element array, token ids and arrays of token ids
(optional features).

A string and an array of strings are judged in ``test_answers.py``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import input as input_checks
from conformance.client import Exchange
from conformance.corpus import case
from conformance.references import reference_cases
from conformance.run.expect import Expect
from conformance.suite.pytest_fixtures import Answers, Tokenizer
from conformance.wire import Matrix

STRING_CASE = "batch-02"  # a core corpus case
TOKEN_CASES = ["en-sent-01", "zh-01", "code-py-01"]  # reference corpus cases
TEXTS = {c.id: c.text for c in reference_cases()}
# Used only when no tokenizer is known: plausible ids inside any real vocabulary.
PROBE_IDS = [[1000, 2000, 3000], [1500, 2500], [1200, 2200, 3200, 4200]]


def what_token_ids_embed_like(
    expect: Expect,
    answers: Answers,
    exchange: Exchange,
    tokenizer: Tokenizer | None,
    ids: list[str],
) -> tuple[Matrix, str]:
    """What the token-id answer must equal, and in words: its texts' vectors when the ids came
    from a tokenizer; else (no tokenizer) the answer to the same ids again, and a note says
    that only determinism was checked."""
    if tokenizer is not None:
        texts = answers.get([TEXTS[i] for i in ids], encoding_format="float")
        if tokenizer.judged_server:
            expect.note(f"token ids from {tokenizer.origin}: not the truth")
        return expect.matrix(texts, ids), f"token ids from {tokenizer.origin} vs their text"
    again = answers.fresh(exchange.request["input"])
    expect.note(
        "valid and deterministic, but not compared with text: no tokenizer known (no "
        "reference that recorded token ids, no /tokenize route beside /v1)"
    )
    return expect.matrix(again, ids), "repeat"


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
    as_string = single(STRING_CASE)
    as_array = answers.get([as_string.request["input"]], encoding_format="float")
    want = expect.matrix(as_string, [STRING_CASE])
    result = input_checks.string_same_as_array(
        expect.matrix(as_array, [STRING_CASE]), want, expect.vector_atol
    )
    expect(result, exchange=as_array, cases=[STRING_CASE])


@pytest.mark.requirement("input.token-ids")
def test_token_ids_embed_like_their_text(
    expect: Expect, answers: Answers, tokenizer: Tokenizer | None, dim: int
) -> None:
    ids = TOKEN_CASES[:1]
    (tokens,) = token_ids(tokenizer, ids)
    exchange = answers.get(tokens, encoding_format="float")
    expect.refused(exchange, "token-id input")
    batch = expect.ok(exchange)
    expected, what = what_token_ids_embed_like(expect, answers, exchange, tokenizer, ids)
    for result in input_checks.token_ids(batch, dim, expected, expect.vector_atol, what):
        expect(result, exchange=exchange, cases=ids)


@pytest.mark.requirement("input.token-id-arrays")
def test_token_id_arrays_embed_like_their_texts(
    expect: Expect, answers: Answers, tokenizer: Tokenizer | None, dim: int
) -> None:
    tokens = token_ids(tokenizer, TOKEN_CASES)
    exchange = answers.get(tokens, encoding_format="float")
    expect.refused(exchange, "token-id input")
    batch = expect.ok(exchange)
    expected, what = what_token_ids_embed_like(expect, answers, exchange, tokenizer, TOKEN_CASES)
    verdicts = input_checks.token_id_arrays(
        batch, len(tokens), dim, expected, expect.vector_atol, what
    )
    for result in verdicts:
        expect(result, exchange=exchange, cases=TOKEN_CASES)


# --- issue 28: optional fields sent as null, as LiteLLM sends them ------------------------------

NULL_FIELDS = ("encoding_format", "dimensions", "user")
NULL_CASES = ["batch-01", "batch-02"]  # core corpus cases


@pytest.mark.requirement("input.null-optional-fields")
@pytest.mark.parametrize("field", NULL_FIELDS)
def test_optional_field_sent_as_null_is_answered_as_if_absent(
    expect: Expect, answers: Answers, field: str
) -> None:
    texts = [case(case_id).text for case_id in NULL_CASES]
    without = {} if field == "encoding_format" else {"encoding_format": "float"}
    absent = expect.matrix(answers.get(texts, **without), NULL_CASES)
    exchange = answers.get(texts, **without, **{field: None})
    what = f"'{field}': null"
    result = input_checks.null_optional_fields(
        exchange.status, exchange.batch, absent, expect.vector_atol, what
    )
    expect(result, exchange=exchange, cases=NULL_CASES)


@pytest.mark.requirement("input.user-field")
def test_the_user_field_changes_nothing(expect: Expect, answers: Answers) -> None:
    """OpenAI's optional 'user' (a string identifying the end user) beside the same texts
    without it (the request the null-fields test asks too)."""
    texts = [case(case_id).text for case_id in NULL_CASES]
    plain = expect.matrix(answers.get(texts, encoding_format="float"), NULL_CASES)
    exchange = answers.get(texts, encoding_format="float", user="embedding-conformance")
    answer = expect.matrix(exchange, NULL_CASES) if exchange.status == 200 else None
    result = input_checks.user_field(exchange.status, answer, plain, expect.vector_atol)
    expect(result, exchange=exchange, cases=NULL_CASES)
