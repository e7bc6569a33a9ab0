"""Building the client-visible answers (pure: the same bytes whichever transport carried them)."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import orjson

from conformance.server import transports

OPTIONS = orjson.OPT_SERIALIZE_NUMPY


def error_body(
    status: int, message: str, param: str | None = None, code: str | None = None
) -> bytes:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return orjson.dumps({"error": {"message": message, "type": kind, "param": param, "code": code}})


def _item_rows(matrix: transports.Float32Matrix, rows: list[int]) -> list[transports.Float32Matrix]:
    bounds = np.cumsum([0, *rows])
    return [matrix[bounds[i] : bounds[i + 1]] for i in range(len(rows))]


def _float_value(block: transports.Float32Matrix) -> Any:
    """One pooled vector, or (the per-token fault) a matrix of token vectors."""
    return block[0] if len(block) == 1 else block


def _fault_base64(block: transports.Float32Matrix, fault: str) -> bytes:
    dtype = ">f4" if fault == "big-endian-base64" else "<f2"
    return base64.b64encode(np.ascontiguousarray(block, dtype=dtype).tobytes())


def embeddings_body(
    *,
    model: str,
    encoding_format: str,
    rows: list[int],
    matrix: transports.Float32Matrix | None,
    items: list[bytes] | None,
    prompt_tokens: int,
    fault: str | None,
    first_index: int = 0,
) -> bytes:
    """The OpenAI response. ``items`` (per-input base64 from the worker) are passed through to
    base64 clients; ``matrix`` is decoded from them only when floats are asked for.
    ``first_index``: the index of the first row (0 but for a fault)."""
    as_base64 = encoding_format == "base64" and fault != "base64-ignored"
    if as_base64 and fault in ("big-endian-base64", "float16-base64"):
        assert matrix is not None
        values: list[Any] = [
            _fault_base64(b, fault).decode("ascii") for b in _item_rows(matrix, rows)
        ]
    elif as_base64:
        values = items if items is not None else transports.encode_items(matrix, rows)  # type: ignore[arg-type]
        values = [value.decode("ascii") for value in values]
    else:
        assert matrix is not None
        values = [_float_value(block) for block in _item_rows(matrix, rows)]
    if fault == "rows-reversed":
        values = values[::-1]
    offset = first_index + (1 if fault == "wrong-index" else 0)
    data = [
        {"object": "embedding", "index": i + offset, "embedding": value}
        for i, value in enumerate(values)
    ]
    document: dict[str, Any] = {"object": "list", "data": data, "model": model}
    if fault != "missing-usage":
        document["usage"] = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}
    return orjson.dumps(document, option=OPTIONS)
