"""The upgrade gate: acceptance, response shape, error answers and statuses kept."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks.baseline import (
    errors,
    same_acceptance,
    shape,
)

SHAPE = {
    "float": ["$:object", "data:array", "data[].embedding:array", "data[].index:number"],
    "base64": ["$:object", "data:array", "data[].embedding:string", "data[].index:number"],
}
ERRORS: dict[str, Any] = {
    "malformed-json": {"status": 400, "envelope": True},
    "empty-array": {"status": 400, "envelope": False},
}


def shape_with(encoding: str, old: str, new: str | None) -> dict[str, list[str]]:
    """SHAPE with one path of one encoding replaced (or dropped when ``new`` is None)."""
    paths = [p for p in SHAPE[encoding] if p != old] + ([new] if new else [])
    return {**SHAPE, encoding: paths}


def errors_with(bad_id: str, **answer: Any) -> dict[str, Any]:
    return {**ERRORS, bad_id: {**ERRORS[bad_id], **answer}}


# same_acceptance


def test_same_acceptance_passes_when_nothing_changed() -> None:
    result = same_acceptance({"a", "b"}, {"c"}, {"c"})
    assert result.passed
    assert result.measured == 0
    assert result.detail == "0 of 3 inputs accepted or rejected differently"


@pytest.mark.parametrize(
    ("rejected_now", "change"),
    [({"a", "c"}, "a was accepted before"), (set(), "c was rejected before")],
    ids=["accepted-now-rejected", "rejected-now-accepted"],
)
def test_same_acceptance_fails_on_a_change_either_way(rejected_now: set[str], change: str) -> None:
    result = same_acceptance({"a", "b"}, {"c"}, rejected_now)
    assert not result.passed
    assert result.measured == 1
    assert result.margin == -1.0
    assert result.detail == f"1 of 3 inputs accepted or rejected differently: {change}"


# shape


def test_shape_kept_passes_on_the_same_shape() -> None:
    result = shape(SHAPE, SHAPE)
    assert result.passed
    assert result.detail == "0 of 8 fields lost or retyped"


def test_shape_kept_passes_when_a_field_is_added() -> None:
    assert shape(SHAPE, shape_with("float", "", "id:string")).passed


def test_shape_kept_fails_on_a_dropped_field() -> None:
    result = shape(SHAPE, shape_with("float", "data[].index:number", None))
    assert not result.passed
    assert result.measured == 1
    assert result.detail.endswith(": float output: data[].index:number")


def test_shape_kept_fails_on_a_retyped_field() -> None:
    now = shape_with("base64", "data[].embedding:string", "data[].embedding:array")
    result = shape(SHAPE, now)
    assert not result.passed
    assert result.detail.endswith(": base64 output: data[].embedding:string")


def test_shape_kept_names_every_lost_path() -> None:
    now = {"float": ["$:object"], "base64": SHAPE["base64"]}
    result = shape(SHAPE, now)
    assert result.measured == 3
    lost = "data:array; float output: data[].embedding:array; float output: data[].index:number"
    assert result.detail == f"3 of 8 fields lost or retyped: float output: {lost}"


def test_past_eight_changes_the_rest_are_counted() -> None:
    before = {"float": [f"field{i}:number" for i in range(11)]}
    result = shape(before, {"float": []})
    assert result.detail.count("float output: ") == 8
    assert result.detail.endswith("float output: field7:number; and 3 more")


# errors


def test_errors_kept_passes_on_the_same_answers() -> None:
    result = errors(ERRORS, ERRORS)
    assert result.passed
    assert result.detail == "0 of 2 bad requests answered differently"


def test_errors_kept_fails_on_a_status_change() -> None:
    result = errors(ERRORS, errors_with("malformed-json", status=500))
    assert not result.passed
    assert result.detail.endswith(": malformed-json: HTTP 400 before, HTTP 500 now")


def test_errors_kept_fails_when_the_envelope_stops_conforming() -> None:
    result = errors(ERRORS, errors_with("malformed-json", envelope=False))
    assert not result.passed
    assert result.detail.endswith(": malformed-json: the error envelope no longer conforms")


def test_errors_kept_passes_when_the_envelope_starts_conforming() -> None:
    assert errors(ERRORS, errors_with("empty-array", envelope=True)).passed


def test_errors_kept_ignores_a_bad_request_no_longer_sent() -> None:
    result = errors(ERRORS, {"empty-array": ERRORS["empty-array"]})
    assert result.passed
    assert result.detail == "0 of 2 bad requests answered differently"
