"""The ``normalization.*`` requirement: a normalized model's vectors have norm 1."""

from __future__ import annotations

from conformance.checks.result import CheckResult
from conformance.checks.vectors import check_unit_norm
from conformance.wire import EmbeddingBatch


def unit_norm(batch: EmbeddingBatch, atol: float) -> CheckResult:
    """max | ||v|| - 1 | over the answer's vectors is within ``atol``: clients compute cosine
    similarity as a dot product. Catches the Normalize module skipped by the engine."""
    return check_unit_norm(batch.vectors, atol)
