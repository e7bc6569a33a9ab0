"""Tools, judging no requirement by themselves: measurements of an answer's vectors (how many,
how long, finite, norm), which the family modules (dimension, finite, normalization, input)
bind to their requirements."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conformance.checks.result import CheckResult, at_most, equals, no_offenders
from conformance.wire import EmbeddingBatch, Vector

Vectors = Sequence[Vector | None]


def _lengths(vectors: Vectors) -> list[int | None]:
    return [None if v is None else len(v) for v in vectors]


def check_item_count(batch: EmbeddingBatch, n_inputs: int) -> CheckResult:
    """One ``data`` item per input. Catches dropped inputs and one item per token."""
    if not batch.data_is_list:
        return equals("data is not a list", n_inputs, "'data' must be a JSON array")
    return equals(len(batch.items), n_inputs, f"number of data items for {n_inputs} inputs")


def check_consistent_dimension(vectors: Vectors, reference_dim: int | None = None) -> CheckResult:
    """Every vector has the same length (the first vector's, or ``reference_dim`` when known);
    a missing vector counts against it.

    Catches per-token output and code paths that skip a projection layer."""
    lengths = _lengths(vectors)
    present = [n for n in lengths if n is not None]
    expected = reference_dim if reference_dim is not None else (present[0] if present else None)
    offenders = [i for i, n in enumerate(lengths) if n is None or n != expected]
    example = f"length {lengths[offenders[0]]} vs {expected}" if offenders else ""
    return no_offenders(offenders, len(lengths), "vectors missing or of another length", example)


def check_expected_dimension(vectors: Vectors, expected: int) -> CheckResult:
    """Every vector has exactly ``expected`` entries (a dropped Dense layer changes it)."""
    lengths = _lengths(vectors)
    offenders = [i for i, n in enumerate(lengths) if n != expected]
    example = f"length {lengths[offenders[0]]}" if offenders else ""
    return no_offenders(offenders, len(lengths), f"vectors not of length {expected}", example)


def check_finite(vectors: Vectors) -> CheckResult:
    """No NaN, Inf or missing element (nulls decode to NaN)."""
    offenders = [i for i, v in enumerate(vectors) if v is None or not np.isfinite(v).all()]
    example = ""
    if offenders:
        bad = vectors[offenders[0]]
        example = (
            "no vector"
            if bad is None
            else f"{int((~np.isfinite(bad)).sum())} non-finite of {len(bad)} elements"
        )
    return no_offenders(offenders, len(vectors), "vectors with non-finite values", example)


def check_nonzero(vectors: Vectors) -> CheckResult:
    """No all-zero vector: it has no direction, so cosine similarity with it is undefined."""
    offenders = [i for i, v in enumerate(vectors) if v is None or not np.any(v)]
    return no_offenders(offenders, len(vectors), "all-zero vectors", "every element is 0")


def check_unit_norm(vectors: Vectors, atol: float) -> CheckResult:
    """max |‖v‖₂ - 1| over all vectors is within ``atol``. Catches a skipped Normalize step."""
    present = [(i, v) for i, v in enumerate(vectors) if v is not None]
    if not present:
        return CheckResult(False, "no vectors", f"<= {atol:g}", None, "nothing to measure")
    deviations = [abs(float(np.linalg.norm(v)) - 1.0) for _, v in present]
    worst = int(np.argmax(deviations))
    index, vector = present[worst]
    norm = float(np.linalg.norm(vector))
    return at_most(
        deviations[worst], atol, f"| ||v|| - 1 | worst at index {index} (norm {norm:.6g})", index
    )
