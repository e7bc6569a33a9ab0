"""What the worker and its faults both read of a request and do to its rows: the texts it
carries, and vectors brought to unit length."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.server.transports import Float32Matrix


def request_texts(header: dict[str, Any]) -> list[str]:
    """The request's texts (none for token ids)."""
    texts: list[str] = header.get("texts", [])
    return texts


def unit_rows(matrix: Float32Matrix) -> Float32Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def truncated(matrix: Float32Matrix, dimensions: int, normalized: bool) -> Float32Matrix:
    """'dimensions': the first values, renormalized when the model's vectors are unit length."""
    return unit_rows(matrix[:, :dimensions]) if normalized else matrix[:, :dimensions]
