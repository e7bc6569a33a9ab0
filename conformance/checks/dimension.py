"""The ``dimension.*`` requirements: one fixed D per model, the one the user requires."""

from __future__ import annotations

from conformance.checks.result import CheckResult, equals
from conformance.checks.vectors import check_consistent_dimension, check_expected_dimension
from conformance.wire import EmbeddingBatch, Vector


def consistent(batch: EmbeddingBatch) -> CheckResult:
    """Every vector of one answer has the first vector's length; a missing one counts against.

    Catches per-token output and code paths that skip a projection layer."""
    return check_consistent_dimension(batch.vectors)


def fixed_across_lengths(short: Vector | None, long: Vector | None) -> CheckResult:
    """A 1-token input and a ~200-token input give vectors of the same length.

    The per-token-output bug (pooling unset after an engine upgrade) makes the size grow with
    the input."""
    detail = "dimension of the ~200-token input vs the 1-token input"
    if short is None or long is None:
        return CheckResult(False, "no vector", "a vector for both inputs", None, detail)
    return equals(len(long), len(short), detail)


def expected(batch: EmbeddingBatch, required_dim: int) -> CheckResult:
    """Every vector has exactly the dimension the user requires (--expect-dim, else the
    reference's): a Dense projection module ignored by the engine gives the backbone's size."""
    return check_expected_dimension(batch.vectors, required_dim)
