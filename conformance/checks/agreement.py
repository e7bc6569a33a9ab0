"""Agreement with a reference: the only checks that see vectors which are well-formed, stable,
normalized, and simply wrong (wrong pooling, a dropped layer, silent truncation, lost
precision)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conformance.checks.result import CheckResult, at_most, no_offenders
from conformance.wire import Matrix, Vector

WORST_LISTED = 3


def _shapes_differ(actual: Matrix, expected: Matrix, what: str) -> CheckResult | None:
    if actual.shape == expected.shape:
        return None
    return CheckResult(
        False,
        f"shape {actual.shape}",
        f"shape {expected.shape}",
        None,
        f"{what}: the vectors cannot be compared (see dimension.*)",
    )


def _worst(per_input: Vector, ids: Sequence[str]) -> str:
    order = np.argsort(-per_input)[:WORST_LISTED]
    return ", ".join(f"{ids[i]} {per_input[i]:.3g}" for i in order)


def check_max_abs_diff(
    actual: Matrix, expected: Matrix, ids: Sequence[str], atol: float, what: str
) -> CheckResult:
    """The largest element-wise |Δ| between each input's vector and the reference's.

    At fp32 this is the check that sees precision loss: a vector rounded to float16 keeps a
    cosine of 0.9999999 with the true one but moves elements by ~1e-4."""
    mismatch = _shapes_differ(actual, expected, what)
    if mismatch is not None:
        return mismatch
    per_input = np.abs(actual - expected).max(axis=1)
    worst = int(np.argmax(per_input))
    detail = f"{what}: max |Δ| per input, worst {_worst(per_input, ids)}"
    return at_most(float(per_input[worst]), atol, detail, worst)


def cosine_distances(actual: Matrix, expected: Matrix) -> Vector:
    """1 - cosine similarity, row by row (a zero vector counts as distance 1)."""
    norms = np.linalg.norm(actual, axis=1) * np.linalg.norm(expected, axis=1)
    dots = (actual * expected).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.where(norms > 0, dots / norms, 0.0)
    return np.asarray(1.0 - cosine, dtype=np.float64)


def check_cosine(
    actual: Matrix, expected: Matrix, ids: Sequence[str], cosine_atol: float, what: str
) -> CheckResult:
    """1 - cosine similarity between each input's vector and the reference's.

    Independent of scale, so it names the direction errors (CLS instead of mean pooling,
    truncation at the wrong length) apart from normalization bugs."""
    mismatch = _shapes_differ(actual, expected, what)
    if mismatch is not None:
        return mismatch
    per_input = cosine_distances(actual, expected)
    worst = int(np.argmax(per_input))
    detail = f"{what}: 1 - cosine per input, worst {_worst(per_input, ids)}"
    broken = [ids[int(i)] for i in np.flatnonzero(~np.isfinite(actual).all(axis=1))]
    if broken:  # a null or NaN vector counts as distance 1: say which, and what they hold
        detail += f"; {len(broken)} with null or non-finite values: {', '.join(broken[:5])}"
    return at_most(float(per_input[worst]), cosine_atol, detail, worst)


def top_k(queries: Matrix, documents: Matrix, k: int) -> list[list[int]]:
    """Indices of each query's k most similar documents by cosine, best first."""
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    d = documents / np.linalg.norm(documents, axis=1, keepdims=True)
    return [list(row[:k]) for row in np.argsort(-(q @ d.T), axis=1, kind="stable")]


def check_same_neighbours(
    queries: Matrix,
    documents: Matrix,
    reference_queries: Matrix,
    reference_documents: Matrix,
    query_ids: Sequence[str],
    document_ids: Sequence[str],
    k: int = 3,
) -> CheckResult:
    """Each query's top-k documents (as a set) are the reference's.

    Element-wise limits bound each vector; this bounds what users do with them: a server whose
    small errors all lean one way can still rank documents differently."""
    mine = top_k(queries, documents, k)
    theirs = top_k(reference_queries, reference_documents, k)
    offenders = [i for i, (a, b) in enumerate(zip(mine, theirs, strict=True)) if set(a) != set(b)]
    example = ""
    if offenders:
        i = offenders[0]
        names = [[document_ids[j] for j in row] for row in (mine[i], theirs[i])]
        example = f"{query_ids[i]}: top-{k} {names[0]}, reference {names[1]}"
    return no_offenders(offenders, len(mine), f"queries ranked differently (top-{k})", example)
