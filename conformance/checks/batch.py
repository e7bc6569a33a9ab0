"""The ``batch.*`` requirements: a text's vector depends neither on its batch nor on its
position in it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from conformance.checks.compare import check_rows_in_place, check_same_vectors
from conformance.checks.result import CheckResult
from conformance.checks.status import check_embedded, is_refusal, not_a_refusal
from conformance.wire import EmbeddingBatch, Matrix


def single_vs_batch(batched: Matrix, alone: Matrix, atol: float, what: str) -> CheckResult:
    """A text embedded inside a batch of mixed-length texts gives its vector sent alone.

    Catches padding positions not masked in pooling and batch-size-dependent kernels."""
    return check_same_vectors(batched, alone, atol, what)


def permutation(permuted: Matrix, original: Matrix, atol: float, what: str) -> CheckResult:
    """Row i of a permuted batch is the original batch's vector of the same text.

    Catches rows returned in completion or length-sorted order."""
    return check_same_vectors(permuted, original, atol, what)


def duplicates(actual: Matrix, alone: Matrix, atol: float, what: str) -> CheckResult:
    """A batch holding one text at scattered positions gives each row its own text's vector.

    Catches inputs deduplicated and their vectors mapped back to the wrong rows."""
    return check_same_vectors(actual, alone, atol, what)


def large(batched: Matrix, alone: Matrix, atol: float, what: str) -> CheckResult:
    """Every row of one large request is its own input's vector: the server's own answer to
    that input sent alone (max |Δ| within ``atol``). Catches chunks of a large batch reassembled
    out of order or its tail dropped (Ollama #6262). Never held against a reference: a server
    that embeds an input otherwise than the reference does so alone and in a batch alike, and
    reference.agreement judges that."""
    return check_same_vectors(batched, alone, atol, what)


def rows_answered(
    status: int,
    envelope: EmbeddingBatch | None,
    alone: Matrix,
    atol: float,
    what: str,
) -> CheckResult | None:
    """How one request of the shapes was answered, against its inputs alone (``alone``: a NaN
    row for an input refused alone): row i input i's vector at index i; a clean refusal passes
    when an input of it is refused alone. None: cleanly refused though none is (a limit lower
    than the request), for the caller to name."""
    if is_refusal(status, large=True):
        refused_alone = bool(np.isnan(alone).any())
        return CheckResult(True, f"HTTP {status}", "", None, what) if refused_alone else None
    if status != 200 or envelope is None:
        reason = not_a_refusal(status) or "no embeddings envelope"
        return check_embedded(status, False, f"{what}: {reason}")
    try:
        actual = envelope.matrix()
    except ValueError as exc:
        return check_embedded(status, False, f"{what}: {exc}")
    indices = [item.index for item in envelope.items]
    return check_rows_in_place(indices, actual, alone, atol, what)


def request_shapes(examples: int, violations: Sequence[CheckResult]) -> CheckResult:
    """Every request shape generated from the corpus was answered with each row its own input's
    vector (the server's answer to it alone) at index i, or cleanly refused for an input the
    server refuses alone. Catches rows that depend on the company they keep: a mask shortcut
    for inputs of equal length, an over-long input split into two rows, the input straddling an
    engine step pooled over its tail. Hypothesis shrinks a failing shape and tries the smallest
    last, so the last violation is the one reported."""
    if violations:
        return violations[-1]
    return CheckResult(True, examples, "shapes without a violation", None, "request shapes")


def documented_limits(
    indices: Sequence[Any], batched: Matrix, alone: Matrix, atol: float, what: str
) -> CheckResult:
    """A request at OpenAI's documented limits that was answered holds, at index i, input i's
    own vector (the server's answer to it alone). Catches large batches returned in another
    order with index renumbered, and chunks reassembled wrongly past a size the rest of the
    suite never sends (a 5xx fails before this check: the answer cannot be measured)."""
    return check_rows_in_place(indices, batched, alone, atol, what)


def documented_limits_served(status: int, what: str) -> CheckResult:
    """A request at OpenAI's documented limits is not refused with a 4xx (a limit lower than
    OpenAI's). A 5xx is no refusal: batch.documented-limits fails it."""
    refused = is_refusal(status, large=True)
    return CheckResult(not refused, f"HTTP {status}", "not a 4xx", None, what)
