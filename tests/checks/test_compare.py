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
