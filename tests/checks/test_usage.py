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


def test_counts_tokens_passes_some_of_the_special_tokens() -> None:
    """[CLS] counted, [SEP] not (or a server that drops [SEP] counting what it embedded: its
    vectors are reference.agreement's to fail): one cause, one FAIL."""
    assert usage.counts_tokens([2, 7, 5], TOKENS, 2, TEXTS, IDS).passed
    assert not usage.counts_tokens([4, 8, 6], TOKENS, 2, TEXTS, IDS).passed  # one too many


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


# 1 - cosine of each input's vector to the reference's: "c" tokenized otherwise (turned away)
AGREE, TURNED = 2e-7, 0.3


def test_counts_tokens_does_not_judge_a_count_where_the_vector_shows_another_tokenizer() -> None:
    result = usage.counts_tokens([3, 8, 9], TOKENS, 2, TEXTS, IDS, [AGREE, AGREE, TURNED], 1e-5)
    assert result.passed
    assert result.measured == 0
    assert result.detail.startswith("0 of 2 inputs with another count")
    assert (
        "not judged, tokenized otherwise (see reference.agreement): "
        "c (prompt_tokens 9, reference 6, 1 - cosine 0.3)" in result.detail
    )


def test_counts_tokens_still_fails_characters_on_the_inputs_that_agree() -> None:
    counted = [len(t) for t in TEXTS]
    result = usage.counts_tokens(counted, TOKENS, 2, TEXTS, IDS, [AGREE, AGREE, TURNED], 1e-5)
    assert not result.passed
    assert result.measured == 2  # a and b; c's count is reference.agreement's matter
    assert result.index == 0
    assert "2 of 2 inputs with another count" in result.detail
    assert "not judged, tokenized otherwise (see reference.agreement): c (" in result.detail


def test_counts_tokens_a_precision_loss_excuses_no_count() -> None:
    # vectors rounded to float16 keep 1 - cosine near 1e-7: no evidence of another tokenizer
    result = usage.counts_tokens([5, 8, 6], TOKENS, 2, TEXTS, IDS, [1e-7, 1e-7, 1e-7], 1e-5)
    assert not result.passed
    assert result.measured == 1
    assert "not judged" not in result.detail


def test_counts_tokens_judges_a_count_whose_vector_cannot_be_compared() -> None:
    result = usage.counts_tokens([5, 8, 6], TOKENS, 2, TEXTS, IDS, [None, AGREE, AGREE], 1e-5)
    assert not result.passed
    assert result.index == 0


def test_counts_tokens_fails_closed_when_no_vector_agrees() -> None:
    # wrong pooling and usage in characters: no count can be told from a tokenizer's
    counted = [len(t) for t in TEXTS]
    agreement = ("reference.agreement",)
    result = usage.counts_tokens(counted, TOKENS, 2, TEXTS, IDS, [TURNED] * 3, 1e-5, agreement)
    assert not result.passed
    assert result.measured == "not measurable"
    assert "no input's vector agrees with the reference" in result.detail
    assert "see reference.agreement" in result.detail
    assert result.follows_from == agreement


def test_counts_tokens_passes_right_counts_whatever_the_vectors() -> None:
    # wrong pooling, right counts: nothing needs excusing, every count is judged and right
    result = usage.counts_tokens([3, 8, 6], TOKENS, 2, TEXTS, IDS, [TURNED] * 3, 1e-5)
    assert result.passed
    assert result.detail == "0 of 3 inputs with another count"
