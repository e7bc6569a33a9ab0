"""The error envelope, the unknown-model answer, unknown values and lenient answers."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np
import pytest

from conformance.checks import errors
from conformance.client.decode import decode_error_body
from conformance.wire import ErrorBody
from tests.checks.builders import response

CONFORMING = {"message": "bad", "type": "invalid_request_error", "param": None, "code": None}


def body(error: Any) -> ErrorBody:
    """An error body decoded as the client decodes it (None: a body that is not JSON)."""
    return decode_error_body(b"not json" if error is None else json.dumps(error).encode())


def test_a_conforming_envelope_has_no_deviation() -> None:
    assert errors.envelope_deviations(body({"error": CONFORMING})) == []
    assert errors.envelope(body({"error": CONFORMING}), "bad").passed


def test_a_body_that_is_not_json() -> None:
    assert errors.envelope_deviations(body(None)) == ["body is not JSON"]


@pytest.mark.parametrize("document", [{"detail": "bad"}, {"error": "bad"}, ["error"]])
def test_no_error_object_at_the_top_level(document: Any) -> None:
    assert errors.envelope_deviations(body(document)) == ["no 'error' object at the top level"]


def test_each_missing_field_is_named() -> None:
    deviations = errors.envelope_deviations(body({"error": {"message": "bad"}}))
    assert deviations == ["error.type missing", "error.param missing", "error.code missing"]


def test_null_param_and_code_are_allowed_but_message_and_type_must_be_strings() -> None:
    error = {**CONFORMING, "message": 3, "type": None}
    assert errors.envelope_deviations(body({"error": error})) == [
        "error.message is not a string",
        "error.type is not a string",
    ]


def test_check_error_envelope_lists_the_deviations_as_measured() -> None:
    result = errors.envelope(body({"error": {"message": "bad"}}), "empty input")
    assert not result.passed
    assert result.measured == "error.type missing; error.param missing; error.code missing"
    assert result.detail == "empty input"


def test_unknown_model_needs_404_and_model_not_found() -> None:
    found = body({"error": {**CONFORMING, "code": "model_not_found"}})
    assert errors.unknown_model(404, found, "model x").passed
    assert not errors.unknown_model(400, found, "model x").passed
    assert not errors.unknown_model(404, body({"error": CONFORMING}), "model x").passed


def test_recovers_judges_the_first_answer_and_says_what_retries_needed() -> None:
    assert errors.recovers(200, True, "after 'x'").passed
    result = errors.recovers(503, False, "after 'x', not retried", 2, 200)
    assert not result.passed and result.measured == "HTTP 503"
    assert "a client that retries asked again 2 times and got HTTP 200" in result.detail
    once = errors.recovers(429, False, "after 'x'", 1, 429)
    assert "asked again 1 time and got HTTP 429" in once.detail


def test_an_unknown_value_should_be_rejected_but_a_5xx_is_no_rejection() -> None:
    assert errors.unknown_value_rejected(400, "encoding_format 'unknown'").passed
    assert not errors.unknown_value_rejected(200, "encoding_format 'unknown'").passed
    assert not errors.unknown_value_rejected(500, "encoding_format 'unknown'").passed


FLOATS = np.array([[0.6, 0.8]])


def test_lenient_but_right_needs_the_same_vectors_in_the_same_encoding() -> None:
    same = errors.lenient_but_right(
        FLOATS, FLOATS, 1e-6, "x", accepted_encoding="float", stands_for_encoding="float"
    )
    assert same.passed
    other = errors.lenient_but_right(
        FLOATS + 0.1, FLOATS, 1e-6, "x", accepted_encoding="float", stands_for_encoding="float"
    )
    assert not other.passed


def test_base64_where_the_request_it_stands_for_gets_floats_is_not_lenient_but_right() -> None:
    """An unknown encoding_format answered with base64: the bytes decode to the right
    vectors, but a client that sent no valid format reads strings where it expects numbers."""
    result = errors.lenient_but_right(
        FLOATS, FLOATS, 1e-6, "x", accepted_encoding="base64", stands_for_encoding="float"
    )
    assert not result.passed
    assert (result.measured, result.limit) == ("base64 embeddings", "float embeddings")


def test_wire_encoding_names_how_the_embeddings_came() -> None:
    assert errors.wire_encoding(response([0.6, 0.8])) == "float"
    as_base64 = base64.b64encode(np.array([0.6, 0.8], "<f4").tobytes()).decode()
    assert errors.wire_encoding(response(as_base64)) == "base64"
    assert errors.wire_encoding(response([0.6, 0.8], as_base64)) == "base64, float"
    assert errors.wire_encoding(response()) == "no embeddings"
