"""The GGUF reader: metadata of every kind and F32/F16 tensors read back as written (shapes in
numpy's order, the exact bytes), the file's own alignment honoured, and each kind of file it
cannot read refused by a ValueError that says why."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from conformance.models import gguf
from tests.models.gguf_writer import Raw, Value, write

METADATA: dict[str, Value] = {
    "general.architecture": "nomic-bert",
    "general.name": "t\u00e9st \u2581model",  # not ASCII: the strings are UTF-8
    "u8": np.uint8(200),
    "i8": np.int8(-100),
    "u16": np.uint16(60000),
    "i16": np.int16(-30000),
    "u32": np.uint32(4_000_000_000),
    "i32": np.int32(-2_000_000_000),
    "f32": np.float32(1e-12),
    "u64": np.uint64(2**63 + 5),
    "i64": np.int64(-(2**62)),
    "f64": np.float64(0.1),
    "flag": True,
    "off": False,
    "count": 7,  # the writer's default for an int: uint32
    "base": 1000.0,  # and for a float: float32
    "tokens": ["[PAD]", "\u2581the", "s", ""],
    "ids": [np.uint32(3), np.uint32(1), np.uint32(4)],
    "scores": [np.float32(-1.5), np.float32(0.25)],
    "nested": [["a", "b"], ["c"]],
}
EXPECTED_METADATA = {
    **{key: value for key, value in METADATA.items() if isinstance(value, (str, bool))},
    "u8": 200,
    "i8": -100,
    "u16": 60000,
    "i16": -30000,
    "u32": 4_000_000_000,
    "i32": -2_000_000_000,
    "f32": float(np.float32(1e-12)),  # the float32 nearest 1e-12, not 1e-12
    "u64": 2**63 + 5,
    "i64": -(2**62),
    "f64": 0.1,
    "count": 7,
    "base": 1000.0,
    "tokens": ["[PAD]", "\u2581the", "s", ""],
    "ids": [3, 1, 4],
    "scores": [-1.5, 0.25],
    "nested": [["a", "b"], ["c"]],
}


def tensors() -> dict[str, np.ndarray]:
    """Of both types, one to three dimensions, and of sizes that leave the next one unaligned
    unless padded."""
    rng = np.random.default_rng(7)
    return {
        "cube": rng.standard_normal((2, 3, 5)).astype(np.float32),
        "odd.f16": rng.standard_normal((3,)).astype(np.float16),
        "matrix.f16": rng.standard_normal((4, 7)).astype(np.float16),
        "vector": rng.standard_normal((5,)).astype(np.float32),
    }


def test_metadata_and_tensors_read_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    written = tensors()
    write(path, METADATA, written)
    model = gguf.read(path)
    assert model.metadata == EXPECTED_METADATA
    assert [type(model.metadata[key]) for key in ("flag", "u64", "f32")] == [bool, int, float]
    assert list(model.tensors) == list(written)  # in the file's order
    for name, array in written.items():
        got = model.tensors[name]
        assert got.shape == array.shape
        assert got.dtype == np.dtype("<f4" if array.dtype == np.float32 else "<f2")
        assert got.tobytes() == array.tobytes()


def test_the_reader_and_writer_agree_with_a_file_written_by_hand(tmp_path: Path) -> None:
    """One F32 tensor of dimensions [3, 2] on disk (3 fastest-varying) is numpy's (2, 3): the
    dimension order checked against bytes laid out from the format's description alone."""
    data = np.arange(6, dtype="<f4")
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, 0)
    header += struct.pack("<Q", 1) + b"t" + struct.pack("<I2QIQ", 2, 3, 2, 0, 0)
    assert len(header) == 65
    by_hand = header + bytes(96 - 65) + data.tobytes()  # the data at 65 rounded up to 32
    (tmp_path / "hand.gguf").write_bytes(by_hand)
    read = gguf.read(tmp_path / "hand.gguf").tensors["t"]
    assert read.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert write(tmp_path / "written.gguf", {}, {"t": data.reshape(2, 3)}) == 96
    assert (tmp_path / "written.gguf").read_bytes() == by_hand


@pytest.mark.parametrize("alignment", [8, 1024])
def test_the_files_own_alignment_is_honoured(tmp_path: Path, alignment: int) -> None:
    """Read at the header's end rounded up to 32, every tensor would be other bytes."""
    path = tmp_path / "aligned.gguf"
    written = tensors()
    start = write(path, {"general.alignment": np.uint32(alignment)}, written)
    unpadded: dict[str, Value] = {"general.alignment": np.uint32(1)}
    end = write(tmp_path / "unpadded.gguf", unpadded, written)  # the same header, unpadded
    assert start % alignment == 0 and start != -(-end // 32) * 32
    model = gguf.read(path)
    assert model.metadata["general.alignment"] == alignment
    for name, array in written.items():
        assert model.tensors[name].tobytes() == array.tobytes()


def test_a_file_that_is_not_gguf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    with pytest.raises(ValueError, match=r"model\.safetensors: not a GGUF file"):
        gguf.read(path)


@pytest.mark.parametrize("version", [1, 2, 4])
def test_a_version_other_than_3_is_refused(tmp_path: Path, version: int) -> None:
    path = tmp_path / "old.gguf"
    write(path, METADATA, tensors(), version=version)
    with pytest.raises(ValueError, match=f"GGUF version {version}, not 3"):
        gguf.read(path)


def test_a_quantized_tensor_is_refused_by_name_and_type(tmp_path: Path) -> None:
    path = tmp_path / "q8.gguf"
    q8_0 = Raw(shape=(2, 32), ggml_type=8, data=bytes(2 * 34))  # 2 blocks: f16 scale + 32 int8
    write(path, METADATA, {**tensors(), "blk.0.ffn_up.weight": q8_0})
    with pytest.raises(ValueError, match=r"tensor blk\.0\.ffn_up\.weight has GGML type 8, not F32"):
        gguf.read(path)


def test_a_tensor_running_past_the_end_is_refused(tmp_path: Path) -> None:
    """The file whole reads; one byte short, its last tensor is refused by name."""
    path = tmp_path / "short.gguf"
    write(path, METADATA, tensors())
    gguf.read(path)
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(ValueError, match="tensor vector runs past the end of the file"):
        gguf.read(path)


def test_a_truncated_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cut.gguf"
    write(path, METADATA, tensors())
    path.write_bytes(path.read_bytes()[:20])
    with pytest.raises(ValueError, match="truncated"):
        gguf.read(path)
