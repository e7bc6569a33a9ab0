"""Input forms: a string and an array of strings (required); token ids (optional)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import compare, envelope, vectors
from conformance.client import Exchange
from conformance.corpus import case
from conformance.expect import Expect, unsupported
from conformance.options import Settings
from conformance.suite.fixtures import Answers

TOKEN_CASES = ["batch-02", "batch-04", "batch-10"]
# Used only when no tokenizer is known: plausible ids inside any real vocabulary.
PROBE_IDS = [[1000, 2000, 3000], [1500, 2500], [1200, 2200, 3200, 4200]]

Tokenizer = Callable[[str], list[int]] | None


@pytest.mark.requirement("input.string")
def test_string_gives_one_vector(
    expect: Expect, single: Callable[[str], Exchange], dim: int
) -> None:
    exchange = single("batch-02")
    batch = expect.ok("input.string", exchange, ["batch-02"])
    expect("input.string", envelope.check_item_count(batch, 1), exchange=exchange)
    expect(
        "input.string", vectors.check_consistent_dimension(batch.vectors, dim), exchange=exchange
    )


@pytest.mark.requirement("input.string-array")
def test_string_array_gives_a_vector_each(
    expect: Expect, batch_float: Exchange, batch_ids: list[str], dim: int
) -> None:
    batch = expect.ok("input.string-array", batch_float, batch_ids)
    expect(
        "input.string-array", envelope.check_item_count(batch, len(batch_ids)), exchange=batch_float
    )
    expect(
        "input.string-array",
        vectors.check_consistent_dimension(batch.vectors, dim),
        exchange=batch_float,
        cases=batch_ids,
    )


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
    settings: Settings,
    answers: Answers,
    exchange: Exchange,
    texts: Exchange | None,
    ids: list[str],
) -> None:
    """Compare with the texts' vectors when the ids came from a tokenizer, else only check
    that the same ids give the same vectors again (and say so)."""
    atol = settings.tolerances.vector_atol
    got = expect.matrix(requirement_id, exchange, ids)
    if texts is None:
        again = expect.matrix(requirement_id, answers.fresh(exchange.request["input"]), ids)
        expect(
            requirement_id,
            compare.check_same_vectors(again, got, atol, "repeat"),
            exchange=exchange,
        )
        expect.note(
            requirement_id,
            "valid and deterministic, but not compared with text: no "
            "tokenizer known (no /tokenize route beside /v1)",
        )
        return
    want = expect.matrix(requirement_id, texts, ids)
    expect(
        requirement_id,
        compare.check_same_vectors(got, want, atol, "token ids vs their text"),
        exchange=exchange,
        cases=ids,
    )


@pytest.mark.requirement("input.token-ids")
def test_token_ids_embed_like_their_text(
    expect: Expect, settings: Settings, answers: Answers, tokenizer: Tokenizer, dim: int
) -> None:
    text = case(TOKEN_CASES[0]).text
    ids = tokenizer(text) if tokenizer else PROBE_IDS[0]
    exchange = token_answer(expect, "input.token-ids", answers, ids, 1, dim)
    texts = answers.get(text, encoding_format="float") if tokenizer else None
    compare_or_repeat(
        expect, "input.token-ids", settings, answers, exchange, texts, TOKEN_CASES[:1]
    )


@pytest.mark.requirement("input.token-id-arrays")
def test_token_id_arrays_embed_like_their_texts(
    expect: Expect, settings: Settings, answers: Answers, tokenizer: Tokenizer, dim: int
) -> None:
    texts = [case(case_id).text for case_id in TOKEN_CASES]
    ids = [tokenizer(t) for t in texts] if tokenizer else PROBE_IDS
    exchange = token_answer(expect, "input.token-id-arrays", answers, ids, len(ids), dim)
    text_answer = answers.get(texts, encoding_format="float") if tokenizer else None
    compare_or_repeat(
        expect, "input.token-id-arrays", settings, answers, exchange, text_answer, TOKEN_CASES
    )
