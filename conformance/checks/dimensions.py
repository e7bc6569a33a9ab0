"""The ``dimensions.*`` requirements: the optional 'dimensions' request parameter (shortened
embeddings), honoured exactly or cleanly refused, never ignored."""

from __future__ import annotations

import numpy as np

from conformance.checks.compare import check_same_vectors
from conformance.checks.result import CheckResult
from conformance.checks.status import check_rejected
from conformance.checks.vectors import Vectors, check_expected_dimension
from conformance.wire import Matrix


def renormalized_prefix(full: Matrix, dimensions: int) -> Matrix:
    """What OpenAI's 'dimensions' returns: the first d entries, scaled back to norm 1."""
    prefix = full[:, :dimensions]
    norms = np.linalg.norm(prefix, axis=1, keepdims=True)
    return prefix / np.where(norms == 0, 1.0, norms)


def honoured(vectors: Vectors, dimensions: int, native: int) -> CheckResult:
    """Asked for d dimensions, every vector has exactly d entries.

    Names the most common real bug apart: full native-length vectors mean the parameter was
    silently ignored."""
    result = check_expected_dimension(vectors, dimensions)
    ignored = all(len(v) == native for v in vectors if v is not None)
    if result.passed or not ignored:
        return result
    what = f"full {native}-entry vectors: 'dimensions' silently ignored"
    return CheckResult(False, native, f"== {dimensions}", None, what, 0)


def renormalized(
    reduced: Matrix, full: Matrix, dimensions: int, atol: float, *, normalized: bool = True
) -> CheckResult:
    """The shortened vectors equal the full ones truncated to d, renormalized when the model's
    output is normalized (else the plain prefix: a model that does not normalize its full
    vectors has no reason to normalize shortened ones).

    Catches truncation without renormalization (norms < 1) and taking the wrong entries."""
    if normalized:
        expected, what = renormalized_prefix(full, dimensions), "renormalized prefix"
    else:
        expected, what = full[:, :dimensions], "prefix (the model does not normalize)"
    return check_same_vectors(
        reduced, expected, atol, f"dimensions={dimensions} vs the full vector's {what}"
    )


def invalid_rejected(status: int, what: str) -> CheckResult:
    """Invalid 'dimensions' (-1, a fraction, larger than native) get a 4xx. Catches the
    parameter ignored, taken modulo the size, or crashing the server."""
    return check_rejected(status, what)


def native(status: int, answer: Matrix | None, full: Matrix, atol: float) -> CheckResult:
    """'dimensions' equal to the model's own dimension, from a server that honours smaller
    values, gets the full vectors (max |Δ| from the answer without the parameter). Catches a
    bound checked as '< native' instead of '<= native'."""
    what = f"dimensions={full.shape[1]} (the model's own) vs the request without it"
    if status != 200 or answer is None:
        return CheckResult(False, f"HTTP {status}", "HTTP 200 with the full vectors", None, what)
    return check_same_vectors(answer, full, atol, what)
