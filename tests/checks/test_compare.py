"""The tool that says whether two answers carry the same vectors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.checks import compare

MATRIX = np.array(
    [
        [0.6, 0.8, 0.0],
        [0.0, 0.6, 0.8],
        [0.8, 0.0, 0.6],
        [1.0, 0.0, 0.0],
    ]
)


# check_same_vectors: batch, permutation, determinism, concurrency


def test_same_vectors_passes_on_identical_matrices_with_full_margin() -> None:
    result = compare.check_same_vectors(MATRIX, MATRIX.copy(), 1e-5, "repeat")
    assert result.passed
    assert result.measured == 0.0
    assert result.margin == 1e-5
    assert result.index == 0


def test_same_vectors_passes_within_the_tolerance() -> None:
    noisy = MATRIX.copy()
    noisy[2, 1] += 2e-7
    result = compare.check_same_vectors(noisy, MATRIX, 1e-5, "batch vs single")
    assert result.passed
    assert result.measured == pytest.approx(2e-7)
    assert result.margin == pytest.approx(1e-5 - 2e-7)
    assert result.index == 2


def test_same_vectors_fails_beyond_the_tolerance_naming_the_worst_row() -> None:
    noisy = MATRIX.copy()
    noisy[1, 0] += 1e-3
    noisy[3, 2] -= 5e-2
    result = compare.check_same_vectors(noisy, MATRIX, 1e-5, "batch vs single")
    assert not result.passed
    assert result.measured == pytest.approx(5e-2)
    assert result.margin == pytest.approx(1e-5 - 5e-2)
    assert result.index == 3
    assert "worst at index 3" in result.detail


def test_same_vectors_fails_on_a_reversed_matrix() -> None:
    result = compare.check_same_vectors(MATRIX[::-1], MATRIX, 1e-5, "permuted batch")
    assert not result.passed
    assert result.measured == pytest.approx(0.8)
    assert result.margin == pytest.approx(1e-5 - 0.8)
    assert result.index == 0


def test_same_vectors_fails_on_a_permuted_matrix() -> None:
    permuted = MATRIX[[0, 1, 3, 2]]  # rows 2 and 3 swapped
    result = compare.check_same_vectors(permuted, MATRIX, 1e-5, "permuted batch")
    assert not result.passed
    assert result.index == 2
    assert result.measured == pytest.approx(0.6)


def test_same_vectors_fails_on_different_shapes() -> None:
    result = compare.check_same_vectors(MATRIX[:3], MATRIX, 1e-5, "batch vs single")
    assert not result.passed
    assert result.measured == "shape (3, 3)"
    assert result.limit == "shape (4, 3)"
    assert result.margin is None
    assert result.index is None


def test_same_vectors_passes_on_two_empty_matrices() -> None:
    result = compare.check_same_vectors(np.zeros((0, 3)), np.zeros((0, 3)), 1e-5, "nothing")
    assert result.passed
    assert result.measured == 0.0
    assert result.index is None


def test_same_vectors_fails_on_nan() -> None:
    broken = MATRIX.copy()
    broken[1, 1] = math.nan
    result = compare.check_same_vectors(broken, MATRIX, 1e-5, "repeat")
    assert not result.passed
    assert result.index == 1


# Vectors that are not normalized: measured in units of their norm (one cause, judged once by
# normalization.unit-norm), never more strictly than unit vectors


def test_rows_of_a_server_that_does_not_normalize_are_compared_in_units_of_their_norm() -> None:
    alone = MATRIX * 23.0  # llama-cpp-python's nomic-embed-text: norms near 23
    batched = alone.copy()
    batched[1, 2] += 2.3e-3  # the packed-batch rounding: 1e-4 of the norm
    result = compare.check_same_vectors(batched, alone, 2e-3, "batch vs single")
    assert result.passed, result
    assert result.measured == pytest.approx(1e-4)
    assert "max |Δ| / ||v|| worst at index 1" in result.detail
    shifted = compare.check_rows_in_place(range(4), alone[[0, 2, 1, 3]], alone, 2e-3, "shape")
    assert not shifted.passed  # a row out of place is as wrong as ever
    assert shifted.measured == pytest.approx(0.8)
    assert "2 of 4 rows past the limit (max |Δ| / ||v||), the first at index 1" in shifted.detail


def test_rows_shorter_than_unit_vectors_are_measured_as_they_are() -> None:
    alone = MATRIX * 0.3  # dimensions cut without renormalizing
    batched = alone.copy()
    batched[0, 0] += 1e-3
    result = compare.check_same_vectors(batched, alone, 1e-5, "batch vs single")
    assert not result.passed
    assert result.measured == pytest.approx(1e-3)
    assert "max |Δ| worst at index 0" in result.detail
