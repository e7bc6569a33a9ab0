"""A tool, judging no requirement by itself: do two answers carry the same vectors?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from conformance.checks.result import CheckResult, at_most
from conformance.wire import Matrix, Vector

UNIT_NORM_SLACK = 0.01  # a unit vector's norm as sent (rounded) is still called 1 in the detail


def row_deviations(actual: Matrix, expected: Matrix) -> tuple[Vector, str]:
    """max |Δ| of each row, in units of the expected row's norm where that norm is above 1,
    and what was measured, for the detail. The tiers' limits are set for unit vectors: a server
    that does not normalize (llama-cpp-python's norms of 5 to 23) would otherwise fail every
    comparison of its own answers on rounding that passes once normalized, where
    normalization.unit-norm judges the norm, once. Vectors of norm up to 1 are measured as they
    are: nothing gets stricter."""
    norms = np.linalg.norm(expected, axis=1)
    scale = np.maximum(norms, 1.0)
    deviations = np.asarray(np.abs(actual - expected).max(axis=1) / scale, dtype=np.float64)
    scaled = bool((norms > 1.0 + UNIT_NORM_SLACK).any())
    return deviations, "max |Δ| / ||v||" if scaled else "max |Δ|"


def check_same_vectors(actual: Matrix, expected: Matrix, atol: float, what: str) -> CheckResult:
    """max |Δ| between corresponding rows of two [count, dim] matrices is within ``atol``
    (relative to a row's norm above 1: ``row_deviations``).

    Used for batch vs single, permuted batches, repeated and concurrent requests: catches
    unmasked padding, rows in the wrong order, noise and answers crossed between requests."""
    if actual.shape != expected.shape:
        return CheckResult(
            False,
            f"shape {actual.shape}",
            f"shape {expected.shape}",
            None,
            f"{what}: the answers cannot be compared",
        )
    if actual.size == 0:
        return at_most(0.0, atol, f"{what}: empty")
    per_row, measure = row_deviations(actual, expected)
    worst = int(np.argmax(per_row))
    return at_most(float(per_row[worst]), atol, f"{what}: {measure} worst at index {worst}", worst)


def check_rows_in_place(
    indices: Sequence[Any], actual: Matrix, alone: Matrix, atol: float, what: str
) -> CheckResult:
    """Item i carries index i and row i is input i's vector sent alone (``row_deviations``
    within ``atol``). A row of ``alone`` that is NaN (the input was refused alone, so nothing is
    owed for it) is not compared.

    Used for the request shapes: a row that moved, an index counted from elsewhere and a row
    pooled over the wrong tokens all show here, each named by its position (the first wrong
    row: where a shift starts)."""
    expected = list(range(len(alone)))
    if list(indices) != expected:
        wrong = next(
            (i for i, index in enumerate(indices) if i >= len(expected) or index != i),
            len(indices),
        )
        shown = list(indices[:8]) + (["..."] if len(indices) > 8 else [])
        return CheckResult(
            False,
            f"index {indices[wrong]!r} at item {wrong}" if wrong < len(indices) else "too few",
            f"indices 0..{len(expected) - 1} in order",
            None,
            f"{what}: {len(indices)} items, indices {shown}",
            min(wrong, len(expected) - 1) if expected else None,
        )
    rows = np.flatnonzero(~np.isnan(alone).any(axis=1))
    if not len(rows):
        return at_most(0.0, atol, f"{what}: no input was answered alone, nothing to compare")
    if actual.shape != alone.shape:
        return CheckResult(
            False,
            f"shape {actual.shape}",
            f"shape {alone.shape}",
            None,
            f"{what}: the rows cannot be compared with the inputs' answers alone",
        )
    per_row, measure = row_deviations(actual[rows], alone[rows])
    off = np.flatnonzero(~(per_row <= atol))  # NaN is wrong too
    if not len(off):
        worst = int(rows[np.argmax(per_row)])
        detail = f"{what}: {measure} worst at index {worst}"
        return at_most(float(per_row.max()), atol, detail, worst)
    first = int(rows[off[0]])  # a shift shows where it starts: the first wrong row
    past = f"{len(off)} of {len(rows)} rows past the limit ({measure})"
    detail = f"{what}: {past}, the first at index {first}"
    return at_most(float(per_row[off[0]]), atol, detail, first)
