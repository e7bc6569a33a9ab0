"""The ``determinism.*`` requirement: the same request twice gives the same vectors."""

from __future__ import annotations

from conformance.checks.compare import check_same_vectors
from conformance.checks.result import CheckResult
from conformance.wire import Matrix


def repeat(again: Matrix, first: Matrix, atol: float) -> CheckResult:
    """A repeated request's vectors equal the first answer's within ``atol``: caches and
    deduplication rely on it. Catches dropout left on at inference, nondeterministic kernels
    and noise."""
    return check_same_vectors(again, first, atol, "repeat vs first")
