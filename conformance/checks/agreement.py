"""Tools, judging no requirement by themselves: agreement of vectors with recorded ones (a
reference, a baseline). The only measurements that see vectors which are well-formed, stable,
normalized, and simply wrong (wrong pooling, a dropped layer, silent truncation, lost
precision)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from conformance.checks.result import CheckResult, Verdicts, at_most
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


@dataclass(frozen=True)
class Comparison:
    """The server's vectors (``actual``) against recorded ones (``expected``), row i being the
    input ``ids[i]``; ``what`` names the comparison in messages."""

    actual: Matrix
    expected: Matrix
    ids: Sequence[str]
    what: str


def check_agreement(compared: Comparison, cosine_atol: float, atol: float) -> Verdicts:
    """Cosine first (it names direction errors such as wrong pooling), then max |Δ| (it names
    precision loss)."""
    actual, expected, ids, what = compared.actual, compared.expected, compared.ids, compared.what
    return (
        check_cosine(actual, expected, ids, cosine_atol, what),
        check_max_abs_diff(actual, expected, ids, atol, what),
    )
