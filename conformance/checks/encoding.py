"""Checks of the base64 encoding of embeddings."""

from __future__ import annotations

from conformance.checks.result import CheckResult, no_offenders
from conformance.wire import EmbeddingBatch


def check_base64_honoured(batch: EmbeddingBatch) -> CheckResult:
    """Asked for base64, every embedding is a base64 string, not a float list.

    The most common real bug: the parameter is silently ignored and floats come back."""
    offenders = [i for i, item in enumerate(batch.items) if item.wire_type != "string"]
    example = f"embedding is a JSON {batch.items[offenders[0]].wire_type}" if offenders else ""
    return no_offenders(offenders, len(batch.items), "items not base64 strings", example)


def check_base64_decodes(batch: EmbeddingBatch, dim: int) -> CheckResult:
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
