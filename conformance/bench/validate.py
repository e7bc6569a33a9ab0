"""Is a benchmarked answer right? A latency is only worth reporting for answers that passed the
same core checks as the suite: count, dimension, finite values, norm, agreement with a reference.
Pure: arrays in, problems out (an empty list: valid)."""

from __future__ import annotations

import numpy as np

from conformance.checks.agreement import cosine_distances
from conformance.wire import Matrix

COSINE_ATOL = 1e-5  # the fp32 tier's limit on 1 - cosine to the reference
NORM_ATOL = 1e-3  # the fp32 tier's limit on | ||v|| - 1 |


def problems(
    answer: Matrix | None,
    reference: Matrix,
    *,
    normalized: bool = True,
    cosine_atol: float = COSINE_ATOL,
    norm_atol: float = NORM_ATOL,
) -> list[str]:
    """What is wrong with ``answer`` (rows for the inputs whose reference rows are given)."""
    if answer is None:
        return ["no vectors in the answer"]
    if answer.ndim != 2 or answer.shape[0] != reference.shape[0]:
        return [f"{answer.shape[0] if answer.ndim else 0} vectors for {reference.shape[0]} inputs"]
    if answer.shape[1] != reference.shape[1]:
        return [f"dimension {answer.shape[1]}, the reference's is {reference.shape[1]}"]
    if not np.isfinite(answer).all():
        return ["non-finite values"]
    found = []
    if normalized:
        worst = float(np.abs(np.linalg.norm(answer, axis=1) - 1).max())
        if worst > norm_atol:
            found.append(f"| ||v|| - 1 | = {worst:.3g} > {norm_atol:g}")
    distance = float(cosine_distances(answer, reference).max())
    if distance > cosine_atol:
        found.append(f"1 - cosine to the reference = {distance:.3g} > {cosine_atol:g}")
    return found
