"""The client-visible body is the same bytes whichever transport carried the matrix."""

from __future__ import annotations

import base64

import numpy as np
import orjson
import pytest

from conformance.server import transports
from conformance.server.responses import embeddings_body

MATRIX = np.random.default_rng(7).normal(size=(3, 8)).astype(np.float32)


def body_of(
    encoding_format: str,
    matrix: transports.Matrix,
    items: list[bytes] | None = None,
    fault: str | None = None,
) -> bytes:
    """The response body for three one-row inputs of ``matrix`` (9 prompt tokens)."""
    return embeddings_body(
        model="m",
        encoding_format=encoding_format,
        rows=[1, 1, 1],
        matrix=matrix,
        items=items,
        prompt_tokens=9,
        fault=fault,
    )


@pytest.mark.parametrize("encoding_format", ["float", "base64"])
def test_base64_transport_and_shm_transport_give_identical_bytes(encoding_format: str) -> None:
    items = transports.encode_items(MATRIX, [1, 1, 1])
    via_base64 = body_of(encoding_format, transports.decode_items(items, 8), items=items)
    via_shm = body_of(encoding_format, MATRIX.copy())
    assert via_base64 == via_shm


def test_float_body_round_trips_float32_exactly() -> None:
    body = orjson.loads(body_of("float", MATRIX))
    floats = np.array([item["embedding"] for item in body["data"]], dtype=np.float32)
    assert np.array_equal(floats, MATRIX)
    assert body["usage"] == {"prompt_tokens": 9, "total_tokens": 9}


@pytest.mark.parametrize(
    ("fault", "dtype"), [("big-endian-base64", ">f4"), ("float16-base64", "<f2")]
)
def test_base64_faults_change_only_the_bytes(fault: str, dtype: str) -> None:
    body = orjson.loads(body_of("base64", MATRIX, fault=fault))
    raw = base64.b64decode(body["data"][0]["embedding"])
    assert np.array_equal(np.frombuffer(raw, dtype=dtype), MATRIX[0].astype(dtype))
