"""Tools, judging no requirement by themselves: agreement of vectors with recorded ones (a
reference, a baseline). The only measurements that see vectors which are well-formed, stable,
normalized, and simply wrong (wrong pooling, a dropped layer, silent truncation, lost
precision)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from conformance.checks.result import CheckResult, Verdicts, at_most
from conformance.checks.status import unmeasurable
from conformance.tolerances import KERNEL, TIERS, tier_of
from conformance.wire import Matrix, Vector

WORST_LISTED = 3
# The fewest inputs whose median 1 - cosine is judged: a set of them, not one hard input.
MEDIAN_INPUTS = 20


def _shapes_differ(actual: Matrix, expected: Matrix, what: str) -> CheckResult | None:
    if actual.shape == expected.shape:
        return None
    cannot = unmeasurable(f"{what}: the vectors cannot be compared", because=("dimension.*",))
    return replace(cannot, measured=f"shape {actual.shape}", limit=f"shape {expected.shape}")


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


def as_directions(matrix: Matrix) -> Matrix:
    """Each row scaled to norm 1; a zero or non-finite row is left as it is (the checks name
    those). Against a reference that normalizes, the server's vectors are compared as
    directions: their norm is normalization.unit-norm's to judge, once."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    usable = np.isfinite(norms) & (norms > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(usable, matrix / np.where(usable, norms, 1.0), matrix)


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


def check_median_cosine(
    actual: Matrix, expected: Matrix, ids: Sequence[str], median_atol: float, what: str
) -> CheckResult:
    """The median over the inputs of 1 - cosine similarity to the reference's vectors.

    A systematic error moves every input a little (positions counted from the wrong start, a
    prefix, a truncation a few tokens short), while the worst input of a correct server of
    quantized weights may sit far out: the median sees the first without the second's margin."""
    mismatch = _shapes_differ(actual, expected, what)
    if mismatch is not None:
        return mismatch
    median = float(np.median(cosine_distances(actual, expected)))
    detail = f"{what}: median 1 - cosine over {len(ids)} inputs"
    return at_most(median, median_atol, detail)


def cosine_scores(queries: Matrix, documents: Matrix) -> Matrix:
    """Each query's cosine similarity to each document (queries x documents)."""
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    d = documents / np.linalg.norm(documents, axis=1, keepdims=True)
    return np.asarray(q @ d.T, dtype=np.float64)


def top_k(queries: Matrix, documents: Matrix, k: int) -> list[list[int]]:
    """Indices of each query's k most similar documents by cosine, best first."""
    order = np.argsort(-cosine_scores(queries, documents), axis=1, kind="stable")
    return [[int(j) for j in row[:k]] for row in order]


@dataclass(frozen=True)
class Comparison:
    """The server's vectors (``actual``) against recorded ones (``expected``), row i being the
    input ``ids[i]``; ``what`` names the comparison in messages."""

    actual: Matrix
    expected: Matrix
    ids: Sequence[str]
    what: str
    # the recorded vectors are normalized: the server's are compared as directions
    directions: bool = False
    model: str | None = None  # the recorded vectors' model: its own tiers name the fitting one

    @property
    def served(self) -> Matrix:
        """The server's vectors as they are compared."""
        return as_directions(self.actual) if self.directions else self.actual


def check_agreement(
    compared: Comparison, cosine_atol: float, atol: float, median_atol: float | None = None
) -> Verdicts:
    """Cosine first (it names direction errors such as wrong pooling), then, over a set of
    MEDIAN_INPUTS or more and given ``median_atol``, the median cosine (systematic errors),
    then max |Δ| (it names precision loss)."""
    actual, expected, ids, what = compared.served, compared.expected, compared.ids, compared.what
    median = (
        (check_median_cosine(actual, expected, ids, median_atol, what),)
        if median_atol is not None and len(ids) >= MEDIAN_INPUTS
        else ()
    )
    return (
        check_cosine(actual, expected, ids, cosine_atol, what),
        *median,
        check_max_abs_diff(actual, expected, ids, atol, what),
    )


def with_tier_hint(results: Verdicts, model: str | None = None) -> Verdicts:
    """check_agreement's verdicts over a whole corpus, a failure saying which precision tier, if
    any, the vectors fit (``model``'s own limits where measured): a server of q8_0 weights
    judged at fp32 is told to use --precision q8_0, a wrong pooling that none. (Of one input,
    as past the context, it would say nothing of the weights: a truncation can fit a loose
    tier.)"""
    cosine, largest = results[0], results[-1]
    median = results[1].measured if len(results) == 3 else None
    if all(r.passed for r in results) or not (
        isinstance(cosine.measured, float) and isinstance(largest.measured, float)
    ):
        return results
    hint = tier_hint(
        cosine.measured, largest.measured, median if isinstance(median, float) else None, model
    )
    return tuple(r if r.passed else replace(r, detail=f"{r.detail}; {hint}") for r in results)


def tier_hint(
    one_minus_cosine: float,
    max_abs_diff: float,
    median: float | None = None,
    model: str | None = None,
) -> str:
    """The precision tiers whose reference limits (``model``'s own where measured) hold the
    measurements, tightest first, or that none does (the error is not rounding); not the kernel
    tier, which is for another golden."""
    by_looseness = sorted(
        ((name, tier_of(name, model)) for name in TIERS if name != KERNEL),
        key=lambda item: (item[1].cosine_atol, item[1].reference_atol),
    )
    holding = [
        name
        for name, tier in by_looseness
        if one_minus_cosine <= tier.cosine_atol
        and max_abs_diff <= tier.reference_atol
        and (median is None or median <= tier.cosine_median_atol)
    ]
    if holding:
        return (
            f"within the limits of {', '.join(holding)}: right for a server whose weights are "
            f"at one of those precisions (--precision {holding[0]}, ...)"
        )
    loosest, tier = by_looseness[-1]
    return (
        f"past every precision tier ({loosest}: 1 - cosine <= {tier.cosine_atol:g}, "
        f"|Δ| <= {tier.reference_atol:g}): not rounding, another computation"
    )
