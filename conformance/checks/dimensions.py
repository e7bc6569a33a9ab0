"""Checks of the 'dimensions' request parameter (shortened embeddings)."""

from __future__ import annotations

import numpy as np

from conformance.checks.compare import Matrix, check_same_vectors
from conformance.checks.result import CheckResult


def renormalized_prefix(full: Matrix, dimensions: int) -> Matrix:
    """What OpenAI's 'dimensions' returns: the first d entries, scaled back to norm 1."""
    prefix = full[:, :dimensions]
    norms = np.linalg.norm(prefix, axis=1, keepdims=True)
    return prefix / np.where(norms == 0, 1.0, norms)


def check_renormalized(reduced: Matrix, full: Matrix, dimensions: int, atol: float) -> CheckResult:
    """The shortened vectors equal the full ones truncated to d and renormalized.

    Catches truncation without renormalization (norms < 1) and taking the wrong entries."""
    return check_same_vectors(
        reduced,
        renormalized_prefix(full, dimensions),
        atol,
        f"dimensions={dimensions} vs the full vector's renormalized prefix",
    )
