"""The property every generated request body must satisfy, by its label."""

from __future__ import annotations

import pytest

from conformance.checks import status
from conformance.checks.fuzz import (
    check_answer_to,
    check_labelled_answer,
    has_valid_vectors,
    input_count,
    robust,
)
from tests.checks.builders import response


@pytest.mark.parametrize(
    ("label", "code", "envelope", "count", "passed"),
    [
        ("valid", 200, True, True, True),
        ("valid", 200, True, False, False),  # one item missing
        ("valid", 400, False, False, False),  # a valid body refused
        ("invalid", 400, False, False, True),
        ("invalid", 200, True, True, False),  # garbage accepted
        ("arguable", 400, False, False, True),
        ("arguable", 200, True, True, True),
        ("arguable", 200, False, True, False),  # served, but broken
    ],
)
def test_labelled_answer(label: str, code: int, envelope: bool, count: bool, passed: bool) -> None:
    assert check_labelled_answer(label, code, envelope, count, "body").passed is passed


@pytest.mark.parametrize("label", ["valid", "invalid", "arguable"])
def test_a_5xx_fails_every_label(label: str) -> None:
    result = check_labelled_answer(label, 500, False, False, "body")
    assert not result.passed and result.limit == "< 500"


def test_generated_passes_without_violations_and_counts_the_examples() -> None:
    result = robust(100, [])
    assert result.passed and result.measured == 100


def test_generated_reports_the_last_violation_the_minimal_example() -> None:
    first, minimal = status.no_answer("an answer", "first"), status.no_answer("an answer", "min")
    assert robust(100, [first, minimal]) is minimal


def test_input_count_is_one_per_list_element_else_one() -> None:
    assert input_count({"input": ["a", "b"]}) == 2
    assert input_count({"input": [[1, 2], [3]]}) == 2
    assert input_count({"input": "a"}) == 1
    assert input_count({"model": "m"}) == 1


def test_a_flat_array_of_numbers_is_one_input_of_token_ids() -> None:
    assert input_count({"input": [101, 7592, 102]}) == 1
    assert input_count({"input": [False, False]}) == 1  # read as the token ids [0, 0]
    assert input_count({"input": [1, "a"]}) == 2
    assert input_count({"input": [5, "7"]}) == 1  # lax validators read "7" as 7
    assert input_count({"input": ["1", "2"]}) == 2  # two texts that spell numbers
    assert input_count({"input": []}) == 0  # hygiene (a SHOULD): no vectors is consistent


def test_valid_vectors_need_every_vector_finite_and_of_the_dimension() -> None:
    assert has_valid_vectors(response([0.6, 0.8], [1.0, 0.0]), 2)
    assert not has_valid_vectors(response([0.6, 0.8], [1.0]), 2)
    assert not has_valid_vectors(response([0.6, None]), 2)
    assert not has_valid_vectors(None, 2)


def test_answer_to_a_valid_body_needs_one_valid_vector_per_input() -> None:
    body = {"model": "m", "input": ["a", "b"]}
    assert check_answer_to("valid", body, 200, response([0.6, 0.8], [1.0, 0.0]), 2).passed
    short = check_answer_to("valid", body, 200, response([0.6, 0.8]), 2)
    assert not short.passed and short.measured == "HTTP 200 with a broken envelope"


def test_an_empty_list_answered_with_no_vectors_is_a_valid_answer() -> None:
    """input [] is hygiene (input.empty-rejected, a SHOULD): no vectors is the consistent
    answer, and fuzz.robust must not fail it; a vector for nothing is not consistent."""
    body = {"model": "m", "input": []}
    assert check_answer_to("arguable", body, 200, response(), 2).passed
    assert not check_answer_to("arguable", body, 200, response([0.6, 0.8]), 2).passed
