"""Reference-free checks of meaning, on hand-made vectors."""

from __future__ import annotations

import numpy as np

from conformance.checks import semantics

RNG = np.random.default_rng(7)


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def random_unit(count: int, dim: int = 64) -> np.ndarray:
    return unit(RNG.standard_normal((count, dim)))


IDS = [f"t{i}" for i in range(10)]


def test_distinct_texts_pass_on_unrelated_vectors() -> None:
    result = semantics.distinct_texts(random_unit(10), IDS)
    assert result.passed and result.margin is not None and result.margin > 0.3


def test_one_vector_for_every_input_fails_distinct_texts() -> None:
    result = semantics.distinct_texts(np.tile(random_unit(1), (10, 1)), IDS)
    assert not result.passed and result.measured >= semantics.SAME_VECTOR
    assert "t0 ~ t1" in result.detail


def test_two_equal_rows_among_many_are_named() -> None:
    vectors = random_unit(10)
    vectors[7] = vectors[3]
    result = semantics.distinct_texts(vectors, IDS)
    assert not result.passed and "t3 ~ t7" in result.detail and result.index == 3


def test_a_paragraph_unlike_its_first_words_passes() -> None:
    result = semantics.not_a_prefix(random_unit(4), random_unit(4), IDS[:4])
    assert result.passed


def test_a_paragraph_cut_to_its_first_words_fails_and_is_named() -> None:
    full, prefixes = random_unit(4), random_unit(4)
    prefixes[2] = full[2]
    result = semantics.not_a_prefix(full, prefixes, IDS[:4])
    assert not result.passed and result.index == 2 and "t2" in result.detail


def triplets(count: int, swapped: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Anchors, paraphrases near them, unrelated texts; ``swapped`` triplets have paraphrase
    and unrelated exchanged."""
    anchors = random_unit(count)
    near = unit(anchors + 0.3 * random_unit(count))
    far = random_unit(count)
    near[:swapped], far[:swapped] = far[:swapped].copy(), near[:swapped].copy()
    return anchors, near, far


def test_paraphrases_closer_pass_with_the_rate_measured() -> None:
    result = semantics.paraphrase_closer(*triplets(10), IDS)
    assert result.passed and result.measured == 1.0
    assert result.limit == ">= 0.9"


def test_one_miss_in_ten_still_passes_two_fail() -> None:
    assert semantics.paraphrase_closer(*triplets(10, swapped=1), IDS).passed
    result = semantics.paraphrase_closer(*triplets(10, swapped=2), IDS)
    assert not result.passed and result.measured == 0.8
    assert result.detail.startswith("8 of 10 triplets")
    assert result.index in (0, 1)  # the worst triplets are the swapped ones


def test_one_vector_for_every_input_fails_the_triplets() -> None:
    same = np.tile(random_unit(1), (10, 1))
    result = semantics.paraphrase_closer(same, same, same, IDS)
    assert not result.passed and result.measured == 0.0
