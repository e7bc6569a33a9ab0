"""A tool, judging no requirement by itself: do two answers carry the same vectors?"""

from __future__ import annotations

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
