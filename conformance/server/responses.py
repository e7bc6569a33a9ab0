"""Building the client-visible answers (pure: the same bytes whichever transport carried them)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import orjson
from starlette.responses import Response

from conformance.server import transports
from conformance.server.faults import FaultName, hook_of

OPTIONS = orjson.OPT_SERIALIZE_NUMPY
JSON = "application/json"


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type=JSON)


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


def _float_values(matrix: transports.Float32Matrix, rows: list[int]) -> list[Any]:
    return [_float_value(block) for block in _item_rows(matrix, rows)]


def _base64_values(dtype: str, matrix: transports.Float32Matrix, rows: list[int]) -> list[Any]:
    """Each input's rows as base64 of ``dtype`` instead of little-endian float32."""
    return [
        base64.b64encode(np.ascontiguousarray(block, dtype=dtype).tobytes()).decode("ascii")
        for block in _item_rows(matrix, rows)
    ]


# Each input's embedding, from the matrix and each input's count of rows
Values = Callable[[transports.Float32Matrix, list[int]], list[Any]]
# What a fault answers encoding_format=base64 with (the frontend decodes the matrix for these
# faults even when the worker sent base64 items)
BASE64_REWRITES: dict[FaultName, Values] = {
    "base64-ignored": _float_values,
    "big-endian-base64": partial(_base64_values, ">f4"),
    "float16-base64": partial(_base64_values, "<f2"),
}


def _rows_reversed(document: dict[str, Any]) -> None:
    """The rows in the wrong order, 'index' still 0..n-1."""
    data = document["data"]
    embeddings = [item["embedding"] for item in data]
    for item, embedding in zip(data, reversed(embeddings), strict=True):
        item["embedding"] = embedding


def _index_from_one(document: dict[str, Any]) -> None:
    for item in document["data"]:
        item["index"] += 1


def _usage_dropped(document: dict[str, Any]) -> None:
    del document["usage"]


# What a fault changes in the finished answer, before it is serialized
ANSWER_REWRITES: dict[FaultName, Callable[[dict[str, Any]], None]] = {
    "rows-reversed": _rows_reversed,
    "wrong-index": _index_from_one,
    "missing-usage": _usage_dropped,
}


def embeddings_body(
    *,
    model: str,
    encoding_format: str,
    rows: list[int],
    matrix: transports.Float32Matrix | None,
    items: list[bytes] | None,
    prompt_tokens: int,
    fault: FaultName | None,
    first_index: int = 0,
) -> bytes:
    """The OpenAI response. ``items`` (per-input base64 from the worker) are passed through to
    base64 clients; ``matrix`` is decoded from them only when floats are asked for.
    ``first_index``: the index of the first row (0 but for a fault)."""
    values = _values(encoding_format, rows, matrix, items, hook_of(BASE64_REWRITES, fault))
    data = [
        {"object": "embedding", "index": i + first_index, "embedding": value}
        for i, value in enumerate(values)
    ]
    usage = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}
    document: dict[str, Any] = {"object": "list", "data": data, "model": model, "usage": usage}
    rewrite = hook_of(ANSWER_REWRITES, fault)
    if rewrite is not None:
        rewrite(document)
    return orjson.dumps(document, option=OPTIONS)


def _values(
    encoding_format: str,
    rows: list[int],
    matrix: transports.Float32Matrix | None,
    items: list[bytes] | None,
    base64_rewrite: Values | None,
) -> list[Any]:
    """Each input's embedding: its floats, or its base64 (as the fault writes it, if any)."""
    if encoding_format == "base64" and base64_rewrite is not None:
        assert matrix is not None
        return base64_rewrite(matrix, rows)
    if encoding_format == "base64":
        encoded = items if items is not None else transports.encode_items(matrix, rows)  # type: ignore[arg-type]
        return [value.decode("ascii") for value in encoded]
    assert matrix is not None
    return _float_values(matrix, rows)
