"""The 'dimensions' parameter: that many entries, the full vector's renormalized prefix."""

from __future__ import annotations

import numpy as np

from conformance.checks import dimensions

FULL = np.array([[3.0, 4.0, 12.0], [1.0, 0.0, 0.0]]) / np.array([[13.0], [1.0]])


def test_honoured_passes_when_every_vector_has_d_entries() -> None:
    result = dimensions.honoured([np.ones(2), np.ones(2)], 2, native=3)
    assert result.passed and result.measured == 0


def test_full_length_vectors_are_named_a_silently_ignored_parameter() -> None:
    result = dimensions.honoured([np.ones(3), np.ones(3)], 2, native=3)
    assert not result.passed
    assert result.measured == 3 and result.limit == "== 2"
    assert "silently ignored" in result.detail


def test_another_wrong_length_is_reported_as_such() -> None:
    result = dimensions.honoured([np.ones(2), np.ones(1)], 2, native=3)
    assert not result.passed
    assert "silently ignored" not in result.detail and result.index == 1


def test_renormalized_prefix_scales_the_first_d_entries_to_norm_one() -> None:
    prefix = dimensions.renormalized_prefix(FULL, 2)
    np.testing.assert_allclose(prefix, [[0.6, 0.8], [1.0, 0.0]])


def test_renormalized_prefix_leaves_a_zero_prefix_at_zero() -> None:
    assert not dimensions.renormalized_prefix(np.array([[0.0, 0.0, 1.0]]), 2).any()


def test_renormalized_passes_the_right_answer() -> None:
    reduced = dimensions.renormalized_prefix(FULL, 2)
    assert dimensions.renormalized(reduced, FULL, 2, 1e-6).passed


def test_truncation_without_renormalization_fails() -> None:
    result = dimensions.renormalized(FULL[:, :2], FULL, 2, 1e-6)
    assert not result.passed and result.index == 0


def test_the_wrong_entries_fail() -> None:
    last_two = dimensions.renormalized_prefix(FULL[:, 1:], 2)
    assert not dimensions.renormalized(last_two, FULL, 2, 1e-6).passed


def test_a_model_that_does_not_normalize_keeps_the_plain_prefix() -> None:
    """--expect-normalized no (or a reference that is not normalized): no renormalizing."""
    plain = dimensions.renormalized(FULL[:, :2], FULL, 2, 1e-6, normalized=False)
    assert plain.passed
    assert "prefix (the model does not normalize)" in plain.detail
    rescaled = dimensions.renormalized_prefix(FULL, 2)
    assert not dimensions.renormalized(rescaled, FULL, 2, 1e-6, normalized=False).passed


def test_native_passes_the_full_vectors_and_fails_a_refusal_of_the_models_own_size() -> None:
    assert dimensions.native(200, FULL.copy(), FULL, 1e-5).passed
    refused = dimensions.native(400, None, FULL, 1e-5)
    assert not refused.passed and refused.measured == "HTTP 400"
    assert "dimensions=3 (the model's own)" in refused.detail
    assert not dimensions.native(200, FULL[:, :2] * 2, FULL, 1e-5).passed  # not the full ones
