"""Checks of the vectors themselves, on numpy arrays and on decoded responses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.checks import dimension, vectors
from conformance.wire import Vector
from tests.checks.builders import response

UNIT = np.array([0.6, 0.8, 0.0])  # norm 1


def vec(*values: float) -> Vector:
    return np.array(values, dtype=np.float64)


# dimension.consistent


def test_consistent_dimension_passes_on_equal_lengths() -> None:
    result = vectors.check_consistent_dimension([UNIT, UNIT, UNIT])
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_consistent_dimension_fails_on_a_per_token_nested_embedding() -> None:
    row = [0.6, 0.8, 0.0]
    batch = response(row, [row, row, row], row)  # input 1 came back one row per token
    result = vectors.check_consistent_dimension(batch.vectors)
    assert not result.passed
    assert result.measured == 1
    assert result.margin == -1.0
    assert result.index == 1
    assert "length 9 vs 3" in result.detail


def test_consistent_dimension_uses_the_reference_dimension_when_given() -> None:
    result = vectors.check_consistent_dimension([UNIT, UNIT], reference_dim=4)
    assert not result.passed
    assert result.measured == 2
    assert result.margin == -2.0
    assert result.index == 0


def test_consistent_dimension_counts_a_missing_vector_as_another_length() -> None:
    result = vectors.check_consistent_dimension([UNIT, None, UNIT])
    assert not result.passed
    assert result.measured == 1
    assert result.index == 1


def test_consistent_dimension_blames_a_missing_first_vector() -> None:
    result = vectors.check_consistent_dimension([None, UNIT, UNIT])
    assert not result.passed
    assert result.index == 0
    assert result.measured == 1


# dimension.fixed-across-lengths


def test_fixed_across_lengths_passes_on_equal_dimensions() -> None:
    result = dimension.fixed_across_lengths(UNIT, np.ones(3) / math.sqrt(3))
    assert result.passed
    assert result.measured == "3"
    assert result.limit == "== 3"
    assert result.margin is None
    assert result.index is None


def test_fixed_across_lengths_fails_when_the_long_input_grows_per_token() -> None:
    row = [0.6, 0.8, 0.0]
    short = response([row]).first_vector
    long = response([row] * 200).first_vector
    result = dimension.fixed_across_lengths(short, long)
    assert not result.passed
    assert result.measured == "600"
    assert result.limit == "== 3"
    assert result.margin is None


def test_fixed_across_lengths_fails_when_the_long_vector_is_missing() -> None:
    result = dimension.fixed_across_lengths(UNIT, None)
    assert not result.passed
    assert result.measured == "no vector"


def test_fixed_across_lengths_fails_when_no_vector_came_back() -> None:
    short = response({"values": [0.6, 0.8]}).first_vector
    long = response({"values": [0.6, 0.8]}).first_vector
    assert short is None and long is None
    assert not dimension.fixed_across_lengths(short, long).passed


# dimension.expected


def test_expected_dimension_passes_on_the_expected_length() -> None:
    result = vectors.check_expected_dimension([UNIT, UNIT], 3)
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_expected_dimension_fails_on_the_backbone_size() -> None:
    result = vectors.check_expected_dimension([np.zeros(8), np.zeros(8)], 4)
    assert not result.passed
    assert result.measured == 2
    assert result.margin == -2.0
    assert result.index == 0
    assert "length 8" in result.detail


def test_expected_dimension_fails_on_a_missing_vector() -> None:
    result = vectors.check_expected_dimension([UNIT, None], 3)
    assert not result.passed
    assert result.index == 1


# finite.values


def test_finite_passes_on_ordinary_vectors() -> None:
    result = vectors.check_finite([UNIT, vec(-1e30, 1e-30, 0.0)])
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_finite_fails_on_nan() -> None:
    result = vectors.check_finite([UNIT, UNIT, vec(0.1, math.nan, math.nan)])
    assert not result.passed
    assert result.measured == 1
    assert result.margin == -1.0
    assert result.index == 2
    assert "2 non-finite of 3 elements" in result.detail


def test_finite_fails_on_inf() -> None:
    result = vectors.check_finite([vec(math.inf, 0.0), UNIT])
    assert not result.passed
    assert result.index == 0


def test_finite_fails_on_a_null_element_decoded_to_nan() -> None:
    batch = response([0.6, 0.8], [0.6, None])
    result = vectors.check_finite(batch.vectors)
    assert not result.passed
    assert result.measured == 1
    assert result.index == 1


def test_finite_fails_on_a_missing_vector() -> None:
    batch = response([0.6, 0.8], None)
    result = vectors.check_finite(batch.vectors)
    assert not result.passed
    assert result.index == 1
    assert "no vector" in result.detail


# finite.nonzero


def test_nonzero_passes_on_vectors_with_any_nonzero_element() -> None:
    result = vectors.check_nonzero([UNIT, vec(0.0, 0.0, 1e-30)])
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_nonzero_fails_on_an_all_zero_vector() -> None:
    batch = response([0.6, 0.8], [0.6, 0.8], [0.0, 0.0])
    result = vectors.check_nonzero(batch.vectors)
    assert not result.passed
    assert result.measured == 1
    assert result.margin == -1.0
    assert result.index == 2


def test_nonzero_fails_on_a_missing_vector() -> None:
    result = vectors.check_nonzero([None, UNIT])
    assert not result.passed
    assert result.index == 0


# normalization.unit-norm


def test_unit_norm_passes_on_normalized_vectors() -> None:
    result = vectors.check_unit_norm([UNIT, vec(1.0, 0.0, 0.0)], 1e-3)
    assert result.passed
    assert isinstance(result.measured, float)
    assert result.measured < 1e-12
    assert result.margin is not None
    assert 0 < result.margin <= 1e-3


def test_unit_norm_fails_on_an_unnormalized_vector_of_norm_five() -> None:
    batch = response([0.6, 0.8], [3.0, 4.0], [0.8, 0.6])
    result = vectors.check_unit_norm(batch.vectors, 1e-3)
    assert not result.passed
    assert result.measured == pytest.approx(4.0)
    assert result.margin == pytest.approx(1e-3 - 4.0)
    assert result.margin is not None and result.margin < 0
    assert result.index == 1
    assert "norm 5" in result.detail


def test_unit_norm_reports_the_worst_vector() -> None:
    result = vectors.check_unit_norm([UNIT * 1.01, UNIT * 0.5, UNIT * 1.2], 1e-3)
    assert not result.passed
    assert result.measured == pytest.approx(0.5)
    assert result.index == 1


def test_unit_norm_fails_on_an_all_zero_vector() -> None:
    result = vectors.check_unit_norm([UNIT, np.zeros(3)], 1e-3)
    assert not result.passed
    assert result.measured == pytest.approx(1.0)
    assert result.index == 1


def test_unit_norm_fails_on_nan() -> None:
    result = vectors.check_unit_norm([UNIT, vec(math.nan, 1.0, 0.0)], 1e-3)
    assert not result.passed
    assert result.index == 1


def test_unit_norm_skips_missing_vectors_and_keeps_their_position() -> None:
    result = vectors.check_unit_norm([None, UNIT, UNIT * 2], 1e-3)
    assert not result.passed
    assert result.index == 2
    assert result.measured == pytest.approx(1.0)


def test_unit_norm_fails_with_nothing_to_measure() -> None:
    result = vectors.check_unit_norm([None, None], 1e-3)
    assert not result.passed
    assert result.measured == "no vectors"
    assert result.margin is None
    assert result.index is None
