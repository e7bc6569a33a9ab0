"""A GGUF version 3 writer for the tests, written from the format's description (not from a
library): the magic b"GGUF", a uint32 version, uint64 tensor and metadata counts; the metadata
as (string key, uint32 type, value); per tensor its name, uint32 dimension count, uint64
dimensions fastest-varying first (numpy's order reversed), uint32 GGML type and uint64 offset
from the data start; then the data, from the header's end rounded up to ``general.alignment``
(32 unless the metadata says). Little-endian throughout.

Each tensor starts at an offset that is a multiple of the alignment (llama.cpp's own files do
so); nothing follows the last tensor, so the file ends with its last byte.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

import numpy as np

MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
UINT32, FLOAT32, BOOL, STRING, ARRAY = 4, 6, 7, 8, 9
# metadata value types by numpy scalar type, with their struct formats
NUMPY_TYPES: dict[type[np.generic], tuple[int, str]] = {
    np.uint8: (0, "B"),
    np.int8: (1, "b"),
    np.uint16: (2, "H"),
    np.int16: (3, "h"),
    np.uint32: (4, "I"),
    np.int32: (5, "i"),
    np.float32: (6, "f"),
    np.bool_: (7, "?"),
    np.uint64: (10, "Q"),
    np.int64: (11, "q"),
    np.float64: (12, "d"),
}
GGML_F32, GGML_F16 = 0, 1

# A metadata value: a numpy scalar says its own type; a Python bool is a GGUF bool, an int a
# uint32 and a float a float32 (the types llama.cpp's files use for them); a str a string; a
# list or tuple an array of the type of its first item (every item must be of that type).
Value: TypeAlias = bool | int | float | str | np.generic | Sequence["Value"]


@dataclass(frozen=True)
class Raw:
    """A tensor given as its shape (numpy's order), GGML type and data bytes as they are: the
    way to write a type the reader refuses (a quantized one)."""

    shape: tuple[int, ...]
    ggml_type: int
    data: bytes


def write(
    path: Path,
    metadata: Mapping[str, Value],
    tensors: Mapping[str, np.ndarray | Raw],
    *,
    version: int = 3,
) -> int:
    """Write the GGUF file ``path``; return where its data starts (a multiple of the
    alignment). F32 and F16 arrays are written as such; other dtypes are refused."""
    given = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    assert isinstance(given, (int, np.integer)) and not isinstance(given, bool)
    alignment = int(given)
    raws = {name: _raw(name, tensor) for name, tensor in tensors.items()}
    header = bytearray(MAGIC)
    header += struct.pack("<IQQ", version, len(raws), len(metadata))
    for key, value in metadata.items():
        kind = _kind(value)
        header += _string(key) + struct.pack("<I", kind) + _payload(value, kind)
    data = bytearray()
    for name, raw in raws.items():
        data += bytes(-len(data) % alignment)
        header += _string(name) + struct.pack("<I", len(raw.shape))
        header += struct.pack(f"<{len(raw.shape)}Q", *reversed(raw.shape))
        header += struct.pack("<IQ", raw.ggml_type, len(data))
        data += raw.data
    header += bytes(-len(header) % alignment)
    path.write_bytes(bytes(header + data))
    return len(header)


def _raw(name: str, tensor: np.ndarray | Raw) -> Raw:
    if isinstance(tensor, Raw):
        return tensor
    if tensor.dtype == np.float32:
        kind, dtype = GGML_F32, "<f4"
    elif tensor.dtype == np.float16:
        kind, dtype = GGML_F16, "<f2"
    else:
        raise TypeError(f"tensor {name}: {tensor.dtype}, not float32/float16")
    return Raw(tuple(tensor.shape), kind, np.ascontiguousarray(tensor, dtype=dtype).tobytes())


def _kind(value: Value) -> int:
    if isinstance(value, np.generic):
        return NUMPY_TYPES[type(value)][0]
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return UINT32
    if isinstance(value, float):
        return FLOAT32
    if isinstance(value, str):
        return STRING
    return ARRAY


def _payload(value: Value, kind: int) -> bytes:
    """The value's bytes after its type (an array's own item type and count included)."""
    if kind == STRING:
        assert isinstance(value, str)
        return _string(value)
    if kind == ARRAY:
        assert isinstance(value, Sequence) and not isinstance(value, str)
        if not value:
            raise ValueError("an empty array has no item type to write")
        item_kind = _kind(value[0])
        if any(_kind(item) != item_kind for item in value):
            raise ValueError("a GGUF array holds items of one type")
        items = b"".join(_payload(item, item_kind) for item in value)
        return struct.pack("<IQ", item_kind, len(value)) + items
    fmt = {kind: fmt for kind, fmt in NUMPY_TYPES.values()}[kind]
    return struct.pack("<" + fmt, value.item() if isinstance(value, np.generic) else value)


def _string(text: str) -> bytes:
    encoded = text.encode("utf-8")
    return struct.pack("<Q", len(encoded)) + encoded
