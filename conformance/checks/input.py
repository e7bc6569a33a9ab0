"""The ``input.*`` requirements: every input form the API allows gets its own right vectors,
and what it forbids (an empty input) a clean refusal."""

from __future__ import annotations

from conformance.checks.compare import check_same_vectors
from conformance.checks.result import CheckResult, Verdicts
from conformance.checks.status import check_refusal_allowed, check_rejected, is_refusal
from conformance.checks.vectors import check_consistent_dimension, check_finite, check_item_count
from conformance.wire import EmbeddingBatch, Matrix


def _one_vector_per_input(batch: EmbeddingBatch, n_inputs: int, dim: int) -> Verdicts:
    return (check_item_count(batch, n_inputs), check_consistent_dimension(batch.vectors, dim))


def string(batch: EmbeddingBatch, n_inputs: int, dim: int) -> Verdicts:
    """A single string input gets exactly one vector of the native dimension.

    Catches servers that only accept arrays (the most common client call fails)."""
    return _one_vector_per_input(batch, n_inputs, dim)


def string_array(batch: EmbeddingBatch, n_inputs: int, dim: int) -> Verdicts:
    """An array of strings gets one vector of the native dimension per string.

    Catches servers that embed only the first element, or join the array into one text."""
    return _one_vector_per_input(batch, n_inputs, dim)


def string_same_as_array(as_array: Matrix, as_string: Matrix, atol: float) -> CheckResult:
    """A text sent as a string and as a one-element array gives the same vector.

    Catches two request paths that prepare the text differently (a prefix, a strip, a cast)."""
    return check_same_vectors(
        as_array, as_string, atol, "the text as a one-element array vs as a string"
    )


def _like_their_texts(
    batch: EmbeddingBatch, n_inputs: int, dim: int, expected: Matrix, atol: float, what: str
) -> Verdicts:
    """One vector of the native dimension per input (else the rows cannot be compared), each
    equal to its row of ``expected``."""
    shape = _one_vector_per_input(batch, n_inputs, dim)
    if not all(result.passed for result in shape):
        return shape
    return (*shape, check_same_vectors(batch.matrix(), expected, atol, what))


def token_ids(
    batch: EmbeddingBatch, dim: int, expected: Matrix, atol: float, what: str
) -> Verdicts:
    """An array of token ids, when accepted, gets one vector of the native dimension: the
    vector of the text it encodes (``expected``). Catches token ids embedded as if they were
    text ('101 7592 102')."""
    return _like_their_texts(batch, 1, dim, expected, atol, what)


def token_id_arrays(
    batch: EmbeddingBatch, n_inputs: int, dim: int, expected: Matrix, atol: float, what: str
) -> Verdicts:
    """An array of ``n_inputs`` token-id arrays, when accepted, gets one vector per array, each
    its text's. Catches the outer array taken as one sequence, and rows mixed up."""
    return _like_their_texts(batch, n_inputs, dim, expected, atol, what)


def empty_rejected(status: int, what: str) -> CheckResult:
    """'', [''] and [] get a 4xx: the API says input cannot be empty. Catches empty text
    embedded as the tokenizer's special tokens alone, or pooled over nothing (NaN, zeros)."""
    return check_rejected(status, what)


def over_context(status: int, batch: EmbeddingBatch | None, dim: int) -> Verdicts:
    """Input longer than the model's context is cleanly refused, or truncated to a valid vector
    (``batch``: the answer, None when refused). Catches position-embedding overflow crashing
    the engine or returning garbage on long input."""
    if batch is None or is_refusal(status, large=True):
        return (check_refusal_allowed(status, "200"),)
    return (check_consistent_dimension(batch.vectors, dim), check_finite(batch.vectors))


# --- input.null-optional-fields (issue 28) ------------------------------------------------------

AS_IF_ABSENT = "200 with the vectors of the request without the field, or a clean 4xx"


def null_optional_fields(
    status: int,
    answer: EmbeddingBatch | None,
    absent: Matrix,
    atol: float,
    what: str,
) -> CheckResult:
    """An optional field sent as JSON ``null`` (``encoding_format``, ``dimensions``, ``user``)
    is answered as if it were absent (float vectors equal to ``absent``, the answer to the
    request without it), or cleanly refused (a 4xx that names the request; whether it comes in
    OpenAI's error envelope is judged by errors.envelope, once). LiteLLM sends
    its unset optional fields as null: a server that answers them with a 5xx, with base64, or
    with vectors cut to a null 'dimensions' breaks every LiteLLM user. Catches ``None.lower()``
    crashing the handler, a null encoding_format read as base64, a null dimensions as 0."""
    if is_refusal(status):  # its body's shape is errors.envelope's to judge, not this one's
        return CheckResult(True, f"HTTP {status}", AS_IF_ABSENT, None, f"{what}: refused cleanly")
    if status != 200 or answer is None:
        return CheckResult(False, f"HTTP {status}", AS_IF_ABSENT, None, what)
    encodings = sorted({item.encoding for item in answer.items} - {"float"})
    if encodings:
        measured = f"{', '.join(encodings)} embeddings"
        detail = f"{what}: not the float arrays the request without it gets"
        return CheckResult(False, measured, AS_IF_ABSENT, None, detail)
    try:
        answered = answer.matrix()
    except ValueError as exc:
        return CheckResult(False, "not measurable", AS_IF_ABSENT, None, f"{what}: {exc}")
    return check_same_vectors(answered, absent, atol, f"{what} vs without it")


def user_field(status: int, answer: Matrix | None, plain: Matrix, atol: float) -> CheckResult:
    """A request carrying OpenAI's optional 'user' string is answered with the vectors of the
    same request without it. Catches strict schemas that refuse documented fields they do not
    use."""
    what = "with 'user' vs the same request without it"
    if status != 200 or answer is None:
        return CheckResult(False, f"HTTP {status}", "HTTP 200 with the same vectors", None, what)
    return check_same_vectors(answer, plain, atol, what)
