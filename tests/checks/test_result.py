"""The verdict helpers every check builds on: at_most, no_offenders, equals, describe."""

from __future__ import annotations

import math

import numpy as np

from conformance.checks.result import CheckResult, at_most, equals, format_value, no_offenders


def test_at_most_passes_below_the_limit_with_positive_margin() -> None:
    result = at_most(0.25, 1.0, "deviation", 3)
    assert result.passed
    assert result.measured == 0.25
    assert result.limit == "<= 1"
    assert result.margin == 0.75
    assert result.index == 3


def test_at_most_passes_exactly_at_the_limit_with_zero_margin() -> None:
    result = at_most(0.0, 0.0, "bit-identical")
    assert result.passed
    assert result.margin == 0.0
    assert result.index is None


def test_at_most_fails_above_the_limit_with_negative_margin() -> None:
    result = at_most(4.0, 1e-3, "norm deviation", 2)
    assert not result.passed
    assert result.margin is not None
    assert result.margin < 0
    assert math.isclose(result.margin, 1e-3 - 4.0)
    assert result.index == 2


def test_at_most_fails_on_nan() -> None:
    result = at_most(float("nan"), 1.0, "nan measured")
    assert not result.passed
    assert result.measured == "nan"  # a string: NaN is not JSON, and results are written as JSON
    assert result.margin is None
    assert "non-finite" in result.detail


def test_at_most_stores_plain_floats_not_numpy_scalars() -> None:
    result = at_most(np.float64(0.5), np.float64(1.0), "numpy in")
    assert type(result.measured) is float
    assert type(result.margin) is float


def test_no_offenders_passes_with_zero_count_and_no_index() -> None:
    result = no_offenders([], 5, "items bad", "")
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None
    assert result.detail == "0 of 5 items bad"


def test_no_offenders_fails_with_the_count_and_the_first_offender() -> None:
    result = no_offenders([2, 4], 5, "items bad", "why")
    assert not result.passed
    assert result.measured == 2
    assert result.limit == "== 0"
    assert result.margin == -2.0
    assert result.index == 2
    assert result.detail == "2 of 5 items bad; first at index 2: why"


def test_equals_passes_with_non_numeric_margin() -> None:
    result = equals(3, 3, "count")
    assert result.passed
    assert result.measured == "3"
    assert result.limit == "== 3"
    assert result.margin is None
    assert result.index is None


def test_equals_fails_and_reports_the_repr_of_what_was_measured() -> None:
    result = equals("embedding_list", "list", "object")
    assert not result.passed
    assert result.measured == "'embedding_list'"
    assert result.limit == "== 'list'"
    assert result.margin is None


def test_describe_names_measurement_limit_margin_and_detail() -> None:
    result = CheckResult(False, 0.1234567, "<= 0.001", -0.1224567, "worst at index 1", 1)
    assert result.describe() == (
        "measured 0.123 vs allowed <= 0.001, margin -0.122: worst at index 1"
    )


def test_describe_omits_a_missing_margin() -> None:
    result = CheckResult(False, "'x'", "== 'list'", None, "object")
    assert result.describe() == "measured 'x' vs allowed == 'list': object"


def test_format_value_rounds_floats_only() -> None:
    assert format_value(0.000123456) == "0.000123"
    assert format_value(384) == "384"
    assert format_value("no vectors") == "no vectors"
