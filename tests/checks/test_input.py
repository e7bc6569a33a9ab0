"""input.null-optional-fields: a field sent as null is answered as if absent, or cleanly
refused; a 5xx, base64 for a null encoding_format, or other vectors fail."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from conformance.checks import input as input_checks
from conformance.client.decode import decode_error_body
from conformance.wire import ErrorBody
from tests.checks.builders import b64, response

ROWS = [[0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]
ABSENT = np.array(ROWS)
ATOL = 1e-5
CLEAN_ERROR = {
    "error": {"message": "no", "type": "invalid_request_error", "param": None, "code": None}
}


def error(document: Any) -> ErrorBody:
    return decode_error_body(json.dumps(document).encode())


NO_BODY = error({})


def judge(status: int, body: ErrorBody, *rows: Any) -> Any:
    answer = response(*rows) if status == 200 else None
    return input_checks.null_optional_fields(status, answer, ABSENT, ATOL, "'user': null")


def test_answered_as_if_absent_passes() -> None:
    result = judge(200, NO_BODY, *ROWS)
    assert result.passed and "vs without it" in result.detail


def test_a_clean_refusal_passes() -> None:
    result = judge(400, error(CLEAN_ERROR))
    assert result.passed and result.measured == "HTTP 400"


def test_a_refusal_without_the_error_envelope_passes_here() -> None:
    # FastAPI's own 422 (infinity-emb answers a null encoding_format so): a clean refusal; the
    # missing envelope is judged once, by errors.envelope
    result = judge(422, error({"detail": "encoding_format: none is not an allowed value"}))
    assert result.passed and result.measured == "HTTP 422"


def test_a_5xx_fails() -> None:
    result = judge(500, error(CLEAN_ERROR))
    assert not result.passed and result.measured == "HTTP 500"


def test_a_null_encoding_format_answered_with_base64_fails() -> None:
    result = judge(200, NO_BODY, *(b64(row) for row in ROWS))
    assert not result.passed and result.measured == "base64 embeddings"


def test_a_null_dimensions_read_as_a_cut_fails() -> None:
    result = judge(200, NO_BODY, [0.6, 0.8], [0.0, 0.6])
    assert not result.passed and result.measured == "shape (2, 2)"


def test_other_vectors_fail() -> None:
    result = judge(200, NO_BODY, [0.8, 0.6, 0.0], ROWS[1])
    assert not result.passed and result.index == 0


def test_user_field_passes_the_same_vectors_and_fails_a_refusal() -> None:
    plain = np.eye(2, 4)
    assert input_checks.user_field(200, plain.copy(), plain, 1e-5).passed
    refused = input_checks.user_field(400, None, plain, 1e-5)
    assert not refused.passed and refused.measured == "HTTP 400"
    assert not input_checks.user_field(200, plain[::-1], plain, 1e-5).passed
