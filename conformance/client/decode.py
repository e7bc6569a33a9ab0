"""Decode a JSON response body into an :class:`EmbeddingBatch`.

Deliberately independent of any server code (the judge and the judged share nothing): numpy and
the standard library only. Decoding never raises on a malformed embedding; it records what it
found so the checks can judge it.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import numpy as np

from conformance.wire import EmbeddingBatch, ErrorBody, Item, Usage


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _to_float(value: Any) -> float:
    """Best-effort numeric value of a JSON element; NaN where there is none."""
    if _is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return float("nan")
    return float("nan")


def decode_base64_vector(text: str) -> tuple[np.ndarray | None, int | None, str | None]:
    """Little-endian float32 values of a base64 string: (vector, byte count, problem)."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        return None, None, f"not valid base64 ({exc})"
    if len(raw) % 4:
        return None, len(raw), f"decoded to {len(raw)} bytes, not a multiple of 4 (float32)"
    return np.frombuffer(raw, dtype="<f4").astype(np.float64), len(raw), None


def decode_embedding(value: Any) -> tuple[str, np.ndarray | None, str | None, int | None]:
    """(encoding, vector, problem, base64 byte count) of one item's ``embedding`` value."""
    if isinstance(value, str):
        vector, size, problem = decode_base64_vector(value)
        return ("base64" if problem is None else "undecodable"), vector, problem, size
    if not isinstance(value, list):
        return "undecodable", None, f"embedding is {type(value).__name__}, not a list", None
    if all(_is_number(x) for x in value):
        return "float", np.asarray(value, dtype=np.float64), None, None
    if value and all(isinstance(row, list) and all(_is_number(x) for x in row) for row in value):
        rows = [len(row) for row in value]
        flat = np.asarray([x for row in value for x in row], dtype=np.float64)
        return (
            "nested",
            flat,
            f"a nested array of {len(rows)} rows (row lengths {rows[:3]}...)",
            None,
        )
    bad = next(x for x in value if not _is_number(x))
    vector = np.asarray([_to_float(x) for x in value], dtype=np.float64)
    return "non-numeric", vector, f"holds a non-number element {bad!r}", None


_JSON_TYPES = {str: "string", list: "array", dict: "object", bool: "boolean", type(None): "null"}


def json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), "number")


def decode_item(value: Any) -> Item:
    if not isinstance(value, dict):
        return Item(None, None, "undecodable", None, problem=f"data item is {json_type(value)}")
    embedding = value.get("embedding")
    encoding, vector, problem, size = decode_embedding(embedding)
    return Item(
        object=value.get("object"),
        index=value.get("index"),
        encoding=encoding,  # type: ignore[arg-type]
        vector=vector,
        wire_type=json_type(embedding),
        problem=problem,
        base64_bytes=size,
    )


def decode_usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    return Usage(value.get("prompt_tokens"), value.get("total_tokens"))


def decode_response(document: Any) -> EmbeddingBatch:
    """Decode a parsed JSON document; raises ValueError if it is not an object."""
    if not isinstance(document, dict):
        raise ValueError(f"response JSON is a {type(document).__name__}, not an object")
    data = document.get("data")
    items = tuple(decode_item(item) for item in data) if isinstance(data, list) else ()
    return EmbeddingBatch(
        object=document.get("object"),
        model=document.get("model"),
        usage=decode_usage(document.get("usage")),
        items=items,
        data_is_list=isinstance(data, list),
    )


def decode_error_body(raw: bytes) -> ErrorBody:
    try:
        document = json.loads(raw)
    except ValueError:
        return ErrorBody(False, None)
    error = document.get("error") if isinstance(document, dict) else None
    return ErrorBody(True, error if isinstance(error, dict) else None)
