"""A tool, judging no requirement by itself: do two answers carry the same vectors?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from conformance.checks.result import CheckResult, at_most
from conformance.wire import Matrix


def check_same_vectors(actual: Matrix, expected: Matrix, atol: float, what: str) -> CheckResult:
    """max |Δ| between corresponding rows of two [count, dim] matrices is within ``atol``.

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
    per_row = np.abs(actual - expected).max(axis=1)
    worst = int(np.argmax(per_row))
    return at_most(float(per_row[worst]), atol, f"{what}: max |Δ| worst at index {worst}", worst)


def check_rows_in_place(
    indices: Sequence[Any], actual: Matrix, alone: Matrix, atol: float, what: str
) -> CheckResult:
    """Item i carries index i and row i is input i's vector sent alone (max |Δ| within
    ``atol``). A row of ``alone`` that is NaN (the input was refused alone, so nothing is owed
    for it) is not compared.

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
    per_row = np.abs(actual[rows] - alone[rows]).max(axis=1)
    off = np.flatnonzero(~(per_row <= atol))  # NaN is wrong too
    if not len(off):
        worst = int(rows[np.argmax(per_row)])
        return at_most(float(per_row.max()), atol, f"{what}: max |Δ| worst at index {worst}", worst)
    first = int(rows[off[0]])  # a shift shows where it starts: the first wrong row
    detail = f"{what}: {len(off)} of {len(rows)} rows past the limit, the first at index {first}"
    return at_most(float(per_row[off[0]]), atol, detail, first)
