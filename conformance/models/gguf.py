"""Reading a GGUF file (llama.cpp's model format, version 3): its metadata and its F32/F16
tensors, as numpy arrays over a memory map. Only what the project's converter needs; quantized
tensor types are refused by name.

The layout: "GGUF", a version, the tensor and metadata counts; metadata as (key, type, value);
per tensor its name, dimensions (fastest-varying first, the reverse of numpy's order), type and
offset; then the data, aligned to ``general.alignment`` (32 unless it says).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

MAGIC = b"GGUF"
SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
STRING, ARRAY = 8, 9
DTYPES: dict[int, np.dtype[Any]] = {0: np.dtype("<f4"), 1: np.dtype("<f2")}  # F32, F16
DEFAULT_ALIGNMENT = 32


@dataclass(frozen=True)
class Gguf:
    metadata: dict[str, Any]
    tensors: dict[str, np.ndarray]  # read-only views of the file, in numpy's dimension order


def read(path: Path) -> Gguf:
    """The file's metadata and tensors (a ValueError names what is not GGUF 3 or not F32/F16)."""
    with path.open("rb") as handle:
        if handle.read(4) != MAGIC:
            raise ValueError(f"{path.name}: not a GGUF file")
        version, tensor_count, metadata_count = _unpack(handle, "IQQ")
        if version != 3:
            raise ValueError(f"{path.name}: GGUF version {version}, not 3")
        metadata = {}
        for _ in range(metadata_count):
            key = _string(handle)
            (kind,) = _unpack(handle, "I")
            metadata[key] = _value(handle, kind)
        layout: list[tuple[str, tuple[int, ...], np.dtype[Any], int]] = []
        for _ in range(tensor_count):
            name = _string(handle)
            (dimensions,) = _unpack(handle, "I")
            shape = _unpack(handle, "Q" * dimensions)
            kind, offset = _unpack(handle, "IQ")
            if kind not in DTYPES:
                raise ValueError(f"{path.name}: tensor {name} has GGML type {kind}, not F32/F16")
            layout.append((name, tuple(reversed(shape)), DTYPES[kind], offset))
        alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
        start = -(-handle.tell() // alignment) * alignment
    data = np.memmap(path, dtype=np.uint8, mode="r")
    tensors = {}
    for name, shape, dtype, offset in layout:
        size = int(np.prod(shape)) * dtype.itemsize
        at = start + offset
        if at + size > data.size:
            raise ValueError(f"{path.name}: tensor {name} runs past the end of the file")
        tensors[name] = data[at : at + size].view(dtype).reshape(shape)
    return Gguf(metadata, tensors)


def _unpack(handle: BinaryIO, fields: str) -> tuple[Any, ...]:
    size = struct.calcsize("<" + fields)
    raw = handle.read(size)
    if len(raw) != size:
        raise ValueError("a truncated GGUF header")
    return struct.unpack("<" + fields, raw)


def _string(handle: BinaryIO) -> str:
    (length,) = _unpack(handle, "Q")
    return handle.read(length).decode("utf-8")


def _value(handle: BinaryIO, kind: int) -> Any:
    if kind in SCALARS:
        return _unpack(handle, SCALARS[kind])[0]
    if kind == STRING:
        return _string(handle)
    if kind == ARRAY:
        item_kind, count = _unpack(handle, "IQ")
        return [_value(handle, item_kind) for _ in range(count)]
    raise ValueError(f"unknown GGUF metadata type {kind}")
