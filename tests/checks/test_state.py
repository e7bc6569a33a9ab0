"""state.unchanged: every later answer to the state canary carries its first answer's vectors."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.checks import state
from conformance.checks.state import CanaryAnswer

FIRST = np.array([[0.6, 0.8, 0.0], [0.0, 0.6, 0.8], [0.8, 0.0, 0.6]])
LARGEST = "right after the largest request (128 inputs in one request, answered HTTP 200)"
END = "at the run's end, after its last test test_usage.py::test_x"


def test_equal_answers_pass_with_the_smallest_margin() -> None:
    nudged = FIRST.copy()
    nudged[1, 2] += 3e-7
    later = [CanaryAnswer(LARGEST, FIRST.copy()), CanaryAnswer(END, nudged)]
    result = state.unchanged(FIRST, later, 1e-5)
    assert result.passed
    assert result.measured == pytest.approx(3e-7)
    assert result.margin == pytest.approx(1e-5 - 3e-7)
    assert result.index == 1
    assert END in result.detail  # the answer nearest the limit


def test_a_deviating_answer_fails_and_names_the_request_before_it() -> None:
    zeros = np.zeros_like(FIRST)
    later = [CanaryAnswer(LARGEST, FIRST.copy()), CanaryAnswer(END, zeros)]
    result = state.unchanged(FIRST, later, 1e-5)
    assert not result.passed
    assert result.measured == pytest.approx(0.8)
    assert result.margin == pytest.approx(1e-5 - 0.8)
    assert "the canary at the run's end, after its last test test_usage.py::test_x" in result.detail
    assert "vs its first answer (at the run's start)" in result.detail
    assert "allowed <= 1e-05" in result.describe()


def test_the_first_deviating_answer_is_the_one_named() -> None:
    later = [CanaryAnswer(LARGEST, FIRST * 0.5), CanaryAnswer(END, np.zeros_like(FIRST))]
    result = state.unchanged(FIRST, later, 1e-5)
    assert not result.passed and LARGEST in result.detail and END not in result.detail


def test_an_answer_without_vectors_fails_with_its_reason() -> None:
    later = [CanaryAnswer(LARGEST, None, "HTTP 500 application/json: boom")]
    result = state.unchanged(FIRST, later, 1e-5)
    assert not result.passed and result.margin is None
    assert result.detail.endswith(
        f"{LARGEST} vs its first answer (at the run's start): HTTP 500 application/json: boom"
    )


def test_another_shape_fails() -> None:
    result = state.unchanged(FIRST, [CanaryAnswer(END, FIRST[:2])], 1e-5)
    assert not result.passed and "cannot be compared" in result.detail


def test_no_later_answer_judges_nothing_and_fails_closed() -> None:
    assert not state.unchanged(FIRST, [], 1e-5).passed


def test_a_first_answer_of_zeros_fails_closed() -> None:
    """A server poisoned before the run answers the canary with zeros every time: equal
    answers, but nothing was compared."""
    zeros = np.zeros_like(FIRST)
    result = state.unchanged(zeros, [CanaryAnswer(END, zeros.copy())], 1e-5)
    assert not result.passed and result.index == 0
    assert "its first answer (at the run's start) carries a zero or non-finite vector" in (
        result.detail
    )
    with_nan = FIRST.copy()
    with_nan[2, 0] = np.nan
    assert state.unchanged(with_nan, [CanaryAnswer(END, FIRST)], 1e-5).index == 2
