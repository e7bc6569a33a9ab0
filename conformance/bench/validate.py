"""Is a benchmarked answer right? A latency is only worth reporting for answers that passed the
same core checks as the suite: the suite's own check functions (dimension, finite values, norm,
agreement with a reference), at the fp32 tier's limits, their failures put in the bench's words.
Pure: arrays in, problems out (an empty list: valid)."""

from __future__ import annotations

from conformance.checks.agreement import check_cosine
from conformance.checks.vectors import check_expected_dimension, check_finite, check_unit_norm
from conformance.tolerances import REFERENCE_NORM_ATOL, TIERS
from conformance.wire import Matrix

FP32 = TIERS["fp32"]  # the bench's reference runs in fp32, as the servers it times do


def problems(
    answer: Matrix | None,
    reference: Matrix,
    *,
    normalized: bool = True,
    cosine_atol: float = FP32.cosine_atol,
    norm_atol: float = FP32.norm_atol,
) -> list[str]:
    """What is wrong with ``answer`` (rows for the inputs whose reference rows are given): the
    first problem that makes the rest unmeasurable, or every limit the answer is past."""
    inputs, dimension = reference.shape
    if answer is None:
        return ["no vectors in the answer"]
    count = answer.shape[0] if answer.ndim else 0
    if answer.ndim != 2 or count != inputs:  # no row to pair with its input's reference row
        return [f"{count} vectors for {inputs} inputs"]
    rows = list(answer)
    if not check_expected_dimension(rows, dimension).passed:
        return [f"dimension {answer.shape[1]}, the reference's is {dimension}"]
    if not check_finite(rows).passed:
        return ["non-finite values"]
    found = []
    norm = check_unit_norm(rows, norm_atol) if normalized else None
    if norm is not None and not norm.passed:
        found.append(f"| ||v|| - 1 | = {norm.measured:.3g} > {norm_atol:g}")
    ids = [f"input {i}" for i in range(inputs)]
    cosine = check_cosine(answer, reference, ids, cosine_atol, "the answer vs the reference")
    if not cosine.passed:
        found.append(f"1 - cosine to the reference = {cosine.measured:.3g} > {cosine_atol:g}")
    return found


def normalizes(reference: Matrix) -> bool:
    """Whether the reference model normalizes its vectors (so that answers are judged on their
    norm too): a model without a Normalize layer is not wrong."""
    return check_unit_norm(list(reference), REFERENCE_NORM_ATOL).passed
