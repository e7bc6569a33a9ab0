"""The ``finite.*`` requirements: every vector is made of numbers and has a direction."""

from __future__ import annotations

from conformance.checks.result import CheckResult
from conformance.checks.vectors import check_finite, check_nonzero
from conformance.wire import EmbeddingBatch


def values(batch: EmbeddingBatch) -> CheckResult:
    """No NaN, Inf or null element (nulls decode to NaN), also for odd inputs.

    Catches division by a zero token count, fp16 overflow and NaN serialized into JSON."""
    return check_finite(batch.vectors)


def nonzero(batch: EmbeddingBatch) -> CheckResult:
    """No all-zero vector: it has no direction, so every similarity with it is meaningless.

    Catches empty token sequences pooled to zeros and error paths returning placeholders."""
    return check_nonzero(batch.vectors)
