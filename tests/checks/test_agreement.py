"""Agreement with a reference: max |Δ|, cosine (tools), and the retrieval neighbours
(reference.retrieval)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from conformance.checks.agreement import (
    MEDIAN_INPUTS,
    Comparison,
    as_directions,
    check_agreement,
    check_cosine,
    check_max_abs_diff,
    cosine_distances,
    tier_hint,
    top_k,
)
from conformance.checks.reference import agreement, over_context, retrieval
from conformance.checks.result import CheckResult
from conformance.tolerances import MODEL_TIERS, TIERS

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


def neighbours_with_second_query(second: list[float], tie: float = 0.0) -> CheckResult:
    queries = np.array([REFERENCE_QUERIES[0], second])
    return retrieval(queries, DOCUMENTS, REFERENCE_QUERIES, DOCUMENTS, QUERY_IDS, DOCUMENT_IDS, tie)


def test_top_k_lists_the_most_similar_documents_best_first() -> None:
    assert top_k(REFERENCE_QUERIES, DOCUMENTS, 3) == [[0, 1, 2], [4, 3, 2]]


def test_top_k_ignores_the_scale_of_the_vectors() -> None:
    assert top_k(REFERENCE_QUERIES * 7, DOCUMENTS * 0.1, 2) == [[0, 1], [4, 3]]


def test_same_neighbours_passes_on_the_reference_itself() -> None:
    result = neighbours_with_second_query(list(REFERENCE_QUERIES[1]))
    assert result.passed
    assert result.measured == 0
    assert result.detail == "0 of 2 queries ranked differently (top-3, beyond ties within 0)"


def test_same_neighbours_passes_when_only_the_order_inside_the_top_k_changes() -> None:
    assert neighbours_with_second_query([1.0, 2.0, 4.0, 3.0, 5.0]).passed


def test_same_neighbours_fails_when_a_document_swaps_with_rank_four() -> None:
    result = neighbours_with_second_query([1.0, 3.0, 2.0, 4.0, 5.0])  # doc-1 and doc-2 swap
    assert not result.passed
    assert result.measured == 1
    assert result.index == 1
    assert result.detail == (
        "1 of 2 queries ranked differently (top-3, beyond ties within 0); first at index 1: "
        "q2: top-3 ['doc-4', 'doc-3', 'doc-1'], reference ['doc-4', 'doc-3', 'doc-2'] "
        "(doc-1 scored 0.135 below the last of the reference's top-3)"
    )


# q2's reference scores doc-2 and doc-1 at 3/sqrt(55) and 2/sqrt(55): 0.135 apart
SWAPPED = [1.0, 3.0, 2.0, 4.0, 5.0]


def test_a_swap_of_documents_the_reference_scores_within_the_tie_passes() -> None:
    """A quantized tier's score changes may swap two near-tied documents: no user loses."""
    assert neighbours_with_second_query(SWAPPED, tie=0.14).passed


def test_a_swap_past_the_tie_fails() -> None:
    assert not neighbours_with_second_query(SWAPPED, tie=0.13).passed


def test_a_tie_does_not_let_a_far_document_in() -> None:
    """doc-0, the reference's last, in q2's top 3: 0.40 below its 3rd, past any tier's tie."""
    assert not neighbours_with_second_query([3.0, 1.0, 2.0, 4.0, 5.0], tie=0.14).passed


def test_an_agreement_failure_names_the_tier_the_vectors_fit() -> None:
    """Vectors rounded as a q8_0 server's are, judged at fp32: the failure names the tier."""
    exact = unit_rows(16, 384)
    noisy = exact + np.random.default_rng(3).normal(0.0, 2e-3, exact.shape)
    ids = [f"case-{i}" for i in range(16)]
    fp32 = TIERS["fp32"]
    results = agreement(Comparison(noisy, exact, ids, "golden"), fp32)
    fitting = tier_hint(float(results[0].measured), float(results[1].measured))
    assert not any(r.passed for r in results)
    assert all(r.detail.endswith(fitting) for r in results)
    assert "--precision" in fitting and "fp32" not in fitting and "q8_0" in fitting


def test_an_agreement_failure_past_every_tier_says_it_is_not_rounding() -> None:
    exact = unit_rows(4, 384)
    other = unit_rows(4, 384, seed=9)
    results = agreement(Comparison(other, exact, IDS, "golden"), TIERS["fp32"])
    assert all("past every precision tier" in r.detail for r in results)


def test_one_input_past_the_context_names_no_tier() -> None:
    """A truncation that fits a loose tier is not a reason to choose it."""
    exact = unit_rows(1, 384)
    cut = exact + 1e-2
    verdicts = over_context(200, Comparison(cut, exact, ["ctx-past-257"], "cut"), 1e-5, 1e-5)
    assert not any(v.passed for v in verdicts)
    assert not any("tier" in v.detail for v in verdicts)


@pytest.mark.parametrize(
    ("one_minus_cosine", "max_abs_diff", "holding"),
    [
        (1e-6, 1e-6, "fp32, fp16, bf16, q8_0, q4_k_m"),
        (5e-6, 7e-4, "fp16, bf16, q8_0, q4_k_m"),  # llama.cpp's f16 file of MiniLM
        (5e-3, 1.3e-2, "bf16, q8_0, q4_k_m"),  # q8_0 of nomic: bf16's limits hold it too
        (5e-3, 4e-2, "q8_0, q4_k_m"),
        (0.25, 0.1, "q4_k_m"),  # q4_K_M of nomic, its worst input
    ],
)
def test_the_tier_hint_lists_the_tiers_that_hold_tightest_first(
    one_minus_cosine: float, max_abs_diff: float, holding: str
) -> None:
    assert f"within the limits of {holding}:" in tier_hint(one_minus_cosine, max_abs_diff)


# one cause, one FAIL: the norm is normalization.unit-norm's


def test_vectors_of_another_norm_agree_as_directions_and_not_as_they_are() -> None:
    """A server that skips the Normalize module answers the right directions at norms of 5 to
    23 (llama.cpp): against a normalized reference its norm is judged once, elsewhere."""
    exact = unit_rows(30, 384)
    scaled = exact * np.linspace(5.0, 23.0, 30)[:, None]
    as_they_are = agreement(Comparison(scaled, exact, ids_of(30), "golden"), TIERS["fp32"])
    as_directions = agreement(
        Comparison(scaled, exact, ids_of(30), "golden", directions=True), TIERS["fp32"]
    )
    assert not as_they_are[-1].passed  # max |Δ| of raw vectors: the norm judged again
    assert all(r.passed for r in as_directions)


def test_as_directions_leaves_zero_and_non_finite_rows_to_the_checks_that_name_them() -> None:
    rows = np.array([[0.0, 0.0], [np.nan, 1.0], [3.0, 4.0]])
    shown = as_directions(rows)
    assert shown[0].tolist() == [0.0, 0.0]
    assert np.isnan(shown[1, 0])
    assert shown[2].tolist() == pytest.approx([0.6, 0.8])


# no tier is blind: the median sees a systematic error


def ids_of(count: int) -> list[str]:
    return [f"case-{i}" for i in range(count)]


def turned_by(exact: np.ndarray, one_minus_cosine: np.ndarray, seed: int = 5) -> np.ndarray:
    """Each row of ``exact`` turned by the given 1 - cosine, in a random direction."""
    other = unit_rows(len(exact), exact.shape[1], seed)
    other -= (other * exact).sum(axis=1, keepdims=True) * exact  # orthogonal to each row
    other /= np.linalg.norm(other, axis=1, keepdims=True)
    cosine = 1.0 - one_minus_cosine
    return cosine[:, None] * exact + np.sqrt(1.0 - cosine**2)[:, None] * other


def test_a_systematic_error_fails_the_median_where_every_input_passes_alone() -> None:
    """positions-shifted on MiniLM: every input moved a little (here 1 - cos 0.05 each), none
    past MiniLM's q4_K_M worst-input limit (0.1), the median past its median limit (0.02)."""
    limits = MODEL_TIERS["all-MiniLM-L6-v2"]["q4_k_m"]
    exact = unit_rows(40, 384)
    moved = turned_by(exact, np.full(40, 0.05))
    cosine, median, _ = agreement(Comparison(moved, exact, ids_of(40), "golden"), limits)
    assert cosine.passed
    assert not median.passed
    assert median.measured == pytest.approx(0.05)
    assert "median 1 - cosine over 40 inputs" in median.detail


def test_a_few_hard_inputs_far_out_pass_the_median() -> None:
    """A correct quantized server: most inputs barely moved, a few far out (within the worst
    input's limit)."""
    limits = MODEL_TIERS["all-MiniLM-L6-v2"]["q4_k_m"]
    exact = unit_rows(40, 384)
    distances = np.full(40, 0.005)
    distances[:5] = 0.08
    results = agreement(Comparison(turned_by(exact, distances), exact, ids_of(40), "g"), limits)
    assert all(r.passed for r in results[:2])


def test_the_median_is_judged_only_over_a_set() -> None:
    exact = unit_rows(MEDIAN_INPUTS - 1, 8)
    results = check_agreement(
        Comparison(exact, exact, ids_of(MEDIAN_INPUTS - 1), "few"), 1e-5, 1e-5, 1e-5
    )
    assert len(results) == 2


def test_the_tier_hint_names_the_tiers_of_the_measured_model() -> None:
    """MiniLM's vectors off by a median 0.05: inside q4_k_m for any model (0.2), not for MiniLM's
    own q4_K_M weights (0.02)."""
    assert "within the limits of q4_k_m:" in tier_hint(0.09, 0.09, 0.05)
    assert "past every precision tier" in tier_hint(0.09, 0.09, 0.05, "all-MiniLM-L6-v2")
