"""Verdicts on how a request was answered: embedded, refused, crashed, or not at all."""

from __future__ import annotations

import pytest

from conformance.checks import status


@pytest.mark.parametrize(("code", "envelope", "passed"), [(200, True, True), (200, False, False)])
def test_embedded_needs_a_200_with_an_envelope(code: int, envelope: bool, passed: bool) -> None:
    result = status.check_embedded(code, envelope, "a valid request")
    assert result.passed is passed
    assert result.measured == f"HTTP {code}"
    assert result.limit == "HTTP 200 with an embeddings envelope"


@pytest.mark.parametrize("code", [201, 400, 404, 500, 503])
def test_embedded_fails_any_other_status_even_with_an_envelope(code: int) -> None:
    assert not status.check_embedded(code, True, "a valid request").passed


@pytest.mark.parametrize(("code", "passed"), [(400, True), (422, True), (499, True)])
def test_rejected_passes_a_4xx(code: int, passed: bool) -> None:
    assert status.check_rejected(code, "bad").passed is passed


@pytest.mark.parametrize("code", [200, 302, 500, 503])
def test_rejected_fails_a_2xx_3xx_or_5xx(code: int) -> None:
    result = status.check_rejected(code, "garbage")
    assert not result.passed
    assert result.measured == f"HTTP {code}" and result.limit == "4xx"


def test_no_5xx_fails_a_crash() -> None:
    result = status.check_no_5xx(500, False, "arguable")
    assert not result.passed and result.limit == "< 500"


def test_no_5xx_fails_a_200_without_a_valid_envelope() -> None:
    result = status.check_no_5xx(200, False, "arguable")
    assert not result.passed
    assert result.measured == "HTTP 200 without a valid envelope"


@pytest.mark.parametrize(("code", "envelope"), [(200, True), (400, False), (404, False)])
def test_no_5xx_passes_a_refusal_or_a_valid_answer(code: int, envelope: bool) -> None:
    assert status.check_no_5xx(code, envelope, "arguable").passed


def test_refusal_allowed_passes_a_4xx_and_names_the_alternative() -> None:
    result = status.check_refusal_allowed(413, "the reference's truncation")
    assert result.passed
    assert result.measured == "HTTP 413"
    assert result.limit == "4xx, or the reference's truncation"


@pytest.mark.parametrize("code", [200, 500])
def test_refusal_allowed_is_no_pass_for_anything_but_a_4xx(code: int) -> None:
    assert not status.check_refusal_allowed(code, "200").passed


def test_no_answer_always_fails_and_says_why() -> None:
    result = status.no_answer("4xx, or 200", "read timed out")
    assert not result.passed
    assert (result.measured, result.limit, result.detail) == (
        "no answer",
        "4xx, or 200",
        "read timed out",
    )
    assert status.no_answer("a call", "boom", "APIConnectionError").measured == (
        "APIConnectionError"
    )


@pytest.mark.parametrize("code", [400, 404, 415, 422])
def test_a_4xx_about_the_request_is_a_refusal(code: int) -> None:
    assert status.is_refusal(code)
    assert status.check_rejected(code, "bad").passed


@pytest.mark.parametrize("code", [401, 403, 408, 429])
def test_auth_and_rate_limits_are_no_refusal(code: int) -> None:
    """The request was never judged: a MUST that needs a refusal cannot pass on it."""
    assert not status.is_refusal(code)
    result = status.check_rejected(code, "bad")
    assert not result.passed
    assert "not a refusal of the request" in result.detail


def test_413_is_a_refusal_only_of_a_large_request() -> None:
    assert not status.is_refusal(413)
    assert status.is_refusal(413, large=True)
    assert "no size limit applies" in status.check_rejected(413, "one word").detail
    assert status.check_refusal_allowed(413, "truncation").passed  # an input past the context
