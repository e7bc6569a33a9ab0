"""The ``base64.*`` requirements: encoding_format=base64 honoured, well-formed, and equal to the
float output."""

from __future__ import annotations

import numpy as np

from conformance.checks.compare import check_same_vectors
from conformance.checks.result import CheckResult, no_offenders
from conformance.wire import EmbeddingBatch, Matrix


def honoured(batch: EmbeddingBatch) -> CheckResult:
    """Asked for base64, every embedding is a base64 string, not a float list.

    The most common real bug: the parameter is silently ignored and floats come back."""
    offenders = [i for i, item in enumerate(batch.items) if item.wire_type != "string"]
    example = f"embedding is a JSON {batch.items[offenders[0]].wire_type}" if offenders else ""
    return no_offenders(offenders, len(batch.items), "items not base64 strings", example)


def decodes(batch: EmbeddingBatch, dim: int) -> CheckResult:
    """Each base64 string is valid and decodes to exactly 4*dim bytes (float32 values).

    Catches float64 (8*dim) and float16 (2*dim) payloads and broken base64."""
    expected = 4 * dim
    offenders = [
        i
        for i, item in enumerate(batch.items)
        if item.encoding != "base64" or item.base64_bytes != expected
    ]
    example = ""
    if offenders:
        item = batch.items[offenders[0]]
        example = item.problem or f"{item.base64_bytes} bytes, expected {expected}"
    return no_offenders(
        offenders, len(batch.items), f"items not {expected} bytes of base64", example
    )


def _float32_parity(decoded: Matrix, floats: Matrix, atol: float) -> CheckResult:
    """JSON floats are compared after rounding to float32 because a server may print the
    shortest decimal that round-trips its float32 value; base64 carries those same 32 bits."""
    return check_same_vectors(
        decoded.astype(np.float32).astype(np.float64),
        floats.astype(np.float32).astype(np.float64),
        atol,
        "base64 vs float output",
    )


def float_parity(decoded: Matrix, floats: Matrix, atol: float) -> CheckResult:
    """base64-decoded float32 equals the JSON floats rounded to float32 (within ``atol``).

    Catches big-endian byte order and a base64 code path of another precision."""
    return _float32_parity(decoded, floats, atol)


def openai_client(vectors: Matrix, floats: Matrix, atol: float) -> CheckResult:
    """The vectors the official openai client decoded from its default (base64) request equal
    the float output: catches servers that reject or mangle the client's encoding_format."""
    return _float32_parity(vectors, floats, atol)
