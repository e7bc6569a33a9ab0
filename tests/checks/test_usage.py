"""Checks of token accounting across requests."""

from __future__ import annotations

from conformance.checks import usage


def test_batch_additive_passes_when_batch_equals_the_sum_of_singles() -> None:
    result = usage.check_batch_additive(13, [4, 6, 3])
    assert result.passed
    assert result.measured == "13"
    assert result.limit == "== 13"
    assert result.margin is None
    assert result.index is None


def test_batch_additive_fails_when_only_the_first_input_is_counted() -> None:
    result = usage.check_batch_additive(4, [4, 6, 3])
    assert not result.passed
    assert result.measured == "4"
    assert result.limit == "== 13"
    assert result.margin is None
    assert "3 single requests" in result.detail


def test_batch_additive_fails_on_the_padded_batch_size() -> None:
    result = usage.check_batch_additive(3 * 6, [4, 6, 3])  # count x longest
    assert not result.passed
    assert result.measured == "18"


def test_monotonic_passes_on_non_decreasing_counts() -> None:
    result = usage.check_monotonic([2, 8, 8, 24, 120])
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_monotonic_fails_where_a_longer_text_has_fewer_tokens() -> None:
    result = usage.check_monotonic([2, 8, 5, 24, 20])
    assert not result.passed
    assert result.measured == 2
    assert result.margin == -2.0
    assert result.index == 2
    assert "5 tokens after 8" in result.detail


def test_monotonic_passes_on_a_single_count() -> None:
    assert usage.check_monotonic([7]).passed
