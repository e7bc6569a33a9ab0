"""Checks of token accounting across requests."""

from __future__ import annotations

from conformance.checks import usage


def test_batch_additive_passes_when_batch_equals_the_sum_of_singles() -> None:
    result = usage.batch_additive(13, [4, 6, 3])
    assert result.passed
    assert result.measured == "13"
    assert result.limit == "== 13"
    assert result.margin is None
    assert result.index is None


def test_batch_additive_fails_when_only_the_first_input_is_counted() -> None:
    result = usage.batch_additive(4, [4, 6, 3])
    assert not result.passed
    assert result.measured == "4"
    assert result.limit == "== 13"
    assert result.margin is None
    assert "3 single requests" in result.detail


def test_batch_additive_fails_on_the_padded_batch_size() -> None:
    result = usage.batch_additive(3 * 6, [4, 6, 3])  # count x longest
    assert not result.passed
    assert result.measured == "18"


def test_monotonic_passes_on_non_decreasing_counts() -> None:
    result = usage.monotonic_length([2, 8, 8, 24, 120])
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_monotonic_fails_where_a_longer_text_has_fewer_tokens() -> None:
    result = usage.monotonic_length([2, 8, 5, 24, 20])
    assert not result.passed
    assert result.measured == 2
    assert result.margin == -2.0
    assert result.index == 2
    assert "5 tokens after 8" in result.detail


def test_monotonic_passes_on_a_single_count() -> None:
    assert usage.monotonic_length([7]).passed


def test_monotonic_fails_a_count_that_never_changes_with_length() -> None:
    result = usage.monotonic_length([1, 1, 1, 1, 1])  # one per request, whatever the text
    assert not result.passed
    assert "prompt_tokens is 1 for each of 5 ever-longer" in result.detail


TEXTS = ["hello", "tokenization isn't trivial", "日本語"]
IDS = ["a", "b", "c"]
TOKENS = [3, 8, 6]  # with [CLS] and [SEP]


def test_counts_tokens_passes_with_or_without_special_tokens() -> None:
    assert usage.counts_tokens([3, 8, 6], TOKENS, 2, TEXTS, IDS).passed
    assert usage.counts_tokens([1, 6, 4], TOKENS, 2, TEXTS, IDS).passed
    assert usage.counts_tokens([3, 6, 6], TOKENS, 2, TEXTS, IDS).passed  # per input


def test_counts_tokens_fails_characters_with_the_numbers_side_by_side() -> None:
    result = usage.counts_tokens([len(t) for t in TEXTS], TOKENS, 2, TEXTS, IDS)
    assert not result.passed
    assert result.measured == 3
    assert (
        "a: prompt_tokens 5, reference tokenizer 3 (1 without special tokens), "
        "5 characters, 1 words" in result.detail
    )


def test_counts_tokens_fails_words() -> None:
    result = usage.counts_tokens([1, 3, 1], TOKENS, 2, TEXTS, IDS)
    assert not result.passed  # "hello" is one word and one token: only b and c offend
    assert result.measured == 2
    assert result.index == 1
