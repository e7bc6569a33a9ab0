"""The ``batch.*`` requirements: a text's vector depends neither on its batch nor on its
position in it."""

from __future__ import annotations

from conformance.checks.compare import check_same_vectors
from conformance.checks.result import CheckResult
from conformance.wire import Matrix


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
