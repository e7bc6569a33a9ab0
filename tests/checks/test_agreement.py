"""Agreement with a reference: max |Δ|, cosine (tools), and the retrieval neighbours
(reference.retrieval)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from conformance.checks.agreement import (
    check_cosine,
    check_max_abs_diff,
    cosine_distances,
    top_k,
)
from conformance.checks.reference import retrieval
from conformance.checks.result import CheckResult

Check = Callable[[np.ndarray, np.ndarray, Sequence[str], float, str], CheckResult]

IDS = ["first", "second", "third", "fourth"]
MATRIX = np.array(
    [
        [0.6, 0.8, 0.0],
        [0.0, 0.6, 0.8],
        [0.8, 0.0, 0.6],
        [1.0, 0.0, 0.0],
    ]
)
CHECKS: list[Check] = [check_max_abs_diff, check_cosine]


def perturbed() -> np.ndarray:
    """MATRIX with two rows turned: 'fourth' the most (cosine 0.8, max |Δ| 0.6), 'second'
    less (cosine 0.96, max |Δ| 0.2); the other rows untouched."""
    rows = MATRIX.copy()
    rows[1] = [0.0, 0.8, 0.6]
    rows[3] = [0.8, 0.6, 0.0]
    return rows


def unit_rows(count: int, dim: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, dim))
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


# check_max_abs_diff and check_cosine


@pytest.mark.parametrize("check", CHECKS)
def test_agreement_passes_on_identical_vectors_with_full_margin(check: Check) -> None:
    result = check(MATRIX, MATRIX.copy(), IDS, 1e-5, "golden")
    assert result.passed
    assert result.measured == pytest.approx(0.0, abs=1e-15)
    assert result.margin == pytest.approx(1e-5, abs=1e-15)


def test_max_abs_diff_fails_on_a_turned_row_naming_the_worst_first() -> None:
    result = check_max_abs_diff(perturbed(), MATRIX, IDS, 1e-5, "golden")
    assert not result.passed
    assert result.measured == pytest.approx(0.6)
    assert result.limit == "<= 1e-05"
    assert result.margin == pytest.approx(1e-5 - 0.6)
    assert result.index == 3
    assert result.detail.startswith("golden: max |Δ| per input, worst fourth 0.6, second 0.2")


def test_cosine_fails_on_a_turned_row_naming_the_worst_first() -> None:
    result = check_cosine(perturbed(), MATRIX, IDS, 1e-5, "golden")
    assert not result.passed
    assert result.measured == pytest.approx(0.2)
    assert result.limit == "<= 1e-05"
    assert result.margin == pytest.approx(1e-5 - 0.2)
    assert result.index == 3
    assert result.detail.startswith("golden: 1 - cosine per input, worst fourth 0.2, second 0.04")


@pytest.mark.parametrize("check", CHECKS)
def test_agreement_fails_on_different_shapes(check: Check) -> None:
    result = check(MATRIX[:, :2], MATRIX, IDS, 1e-5, "golden")
    assert not result.passed
    assert result.measured == "shape (4, 2)"
    assert result.limit == "shape (4, 3)"
    assert result.margin is None
    assert result.index is None
    assert "cannot be compared" in result.detail


def test_cosine_distance_of_a_zero_vector_is_one() -> None:
    zero = MATRIX.copy()
    zero[2] = 0.0
    assert cosine_distances(zero, MATRIX) == pytest.approx([0.0, 0.0, 1.0, 0.0], abs=1e-15)
    assert cosine_distances(zero, zero)[2] == 1.0
    result = check_cosine(zero, MATRIX, IDS, 1e-5, "golden")
    assert not result.passed
    assert result.measured == pytest.approx(1.0)
    assert result.index == 2


def test_cosine_names_null_vectors_as_such() -> None:
    """A null embedding decodes to NaN: distance 1, and the message says what it holds."""
    broken = MATRIX.copy()
    broken[1] = np.nan
    result = check_cosine(broken, MATRIX, IDS, 1e-5, "golden")
    assert not result.passed
    assert result.measured == pytest.approx(1.0)
    assert result.index == 1
    assert result.detail.endswith("; 1 with null or non-finite values: second")


def test_float16_rounding_keeps_the_cosine_but_moves_elements_past_fp32_tolerance() -> None:
    exact = unit_rows(16, 384)
    rounded = exact.astype(np.float16).astype(np.float64)
    ids = [f"case-{i}" for i in range(16)]
    assert check_cosine(rounded, exact, ids, 1e-5, "fp16").passed
    assert not check_max_abs_diff(rounded, exact, ids, 1e-5, "fp16").passed  # fp32 tier
    assert check_max_abs_diff(rounded, exact, ids, 5e-3, "fp16").passed  # fp16 tier


# top_k and retrieval: documents are the basis vectors, so a query's components
# are its cosines with them


DOCUMENTS = np.eye(5)
DOCUMENT_IDS = [f"doc-{i}" for i in range(5)]
QUERY_IDS = ["q1", "q2"]
REFERENCE_QUERIES = np.array([[5.0, 4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0]])


def neighbours_with_second_query(second: list[float]) -> CheckResult:
    queries = np.array([REFERENCE_QUERIES[0], second])
    return retrieval(queries, DOCUMENTS, REFERENCE_QUERIES, DOCUMENTS, QUERY_IDS, DOCUMENT_IDS)


def test_top_k_lists_the_most_similar_documents_best_first() -> None:
    assert top_k(REFERENCE_QUERIES, DOCUMENTS, 3) == [[0, 1, 2], [4, 3, 2]]


def test_top_k_ignores_the_scale_of_the_vectors() -> None:
    assert top_k(REFERENCE_QUERIES * 7, DOCUMENTS * 0.1, 2) == [[0, 1], [4, 3]]


def test_same_neighbours_passes_on_the_reference_itself() -> None:
    result = neighbours_with_second_query(list(REFERENCE_QUERIES[1]))
    assert result.passed
    assert result.measured == 0
    assert result.detail == "0 of 2 queries ranked differently (top-3)"


def test_same_neighbours_passes_when_only_the_order_inside_the_top_k_changes() -> None:
    assert neighbours_with_second_query([1.0, 2.0, 4.0, 3.0, 5.0]).passed


def test_same_neighbours_fails_when_a_document_swaps_with_rank_four() -> None:
    result = neighbours_with_second_query([1.0, 3.0, 2.0, 4.0, 5.0])  # doc-1 and doc-2 swap
    assert not result.passed
    assert result.measured == 1
    assert result.index == 1
    assert result.detail == (
        "1 of 2 queries ranked differently (top-3); first at index 1: "
        "q2: top-3 ['doc-4', 'doc-3', 'doc-1'], reference ['doc-4', 'doc-3', 'doc-2']"
    )
