"""Decoded responses for check tests, built the realistic way: through decode_response."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from conformance.client.decode import decode_response
from conformance.wire import EmbeddingBatch


def b64(values: list[float], dtype: str = "<f4") -> str:
    """A base64 embedding of ``values`` in ``dtype`` (big-endian, float16... for the bugs)."""
    return base64.b64encode(np.asarray(values, dtype).tobytes()).decode("ascii")


def response(*embeddings: Any) -> EmbeddingBatch:
    """A well-formed envelope carrying ``embeddings`` as sent."""
    return decode_response(
        {
            "object": "list",
            "model": "m",
            "data": [
                {"object": "embedding", "index": i, "embedding": e}
                for i, e in enumerate(embeddings)
            ],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
    )
