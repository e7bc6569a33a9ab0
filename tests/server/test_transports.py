"""The two ways a matrix travels from worker to frontend, and the shared-memory safeguards."""

from __future__ import annotations

import base64
import os
import time

import numpy as np
import pytest

from conformance.server import transports

MATRIX = np.arange(12, dtype=np.float32).reshape(3, 4) / 7


def test_base64_items_round_trip_per_input() -> None:
    items = transports.encode_items(MATRIX, [1, 2])  # input 0: one row; input 1: two rows
    assert len(base64.b64decode(items[0])) == 16 and len(base64.b64decode(items[1])) == 32
    assert np.array_equal(transports.decode_items(items, 4), MATRIX)


def test_wire_bytes_are_little_endian_float32() -> None:
    assert transports.to_wire_bytes(np.array([[1.0]])) == np.float32(1.0).astype("<f4").tobytes()


@pytest.fixture
def prefix() -> str:
    yield (value := transports.new_prefix())
    transports.sweep(value)


def test_segment_round_trip_and_unlink(prefix: str) -> None:
    handle = transports.write_segment(MATRIX, prefix)
    assert handle.name.startswith(prefix) and len(transports.segments(prefix)) == 1
    checked = transports.validate_handle(handle.as_dict(), prefix)
    assert np.array_equal(transports.read_segment(checked), MATRIX)
    assert transports.segments(prefix) == []  # the reader owns cleanup


@pytest.mark.parametrize("name", ["../etc/passwd", "a/b", "x\0y", "psm_other", ""])
def test_handles_outside_our_prefix_are_refused(prefix: str, name: str) -> None:
    with pytest.raises(transports.TransportError):
        transports.validate_handle(
            {
                "name": prefix + name if name.startswith(".") else name,
                "count": 1,
                "dim": 4,
                "dtype": "<f4",
            },
            prefix,
        )


@pytest.mark.parametrize(
    ("count", "dim", "dtype"),
    [
        (-1, 4, "<f4"),
        (1, 0, "<f4"),
        (1, 4, "<f8"),
        (1 << 20, 1 << 10, "<f4"),
        ("1", 4, "<f4"),
    ],
)
def test_handles_with_bad_shapes_or_sizes_are_refused(
    prefix: str, count: object, dim: int, dtype: str
) -> None:
    with pytest.raises(transports.TransportError):
        transports.validate_handle(
            {"name": prefix + "x", "count": count, "dim": dim, "dtype": dtype}, prefix
        )


def test_a_short_segment_is_refused(prefix: str) -> None:
    handle = transports.write_segment(MATRIX[:1], prefix)
    lying = transports.ShmHandle(handle.name, 3, 4)
    with pytest.raises(transports.TransportError):
        transports.read_segment(lying)


def test_reaper_removes_only_old_segments_of_its_own_prefix(prefix: str) -> None:
    old = transports.write_segment(MATRIX, prefix)
    stale = time.time() - 120
    os.utime(transports.SHM_DIR / old.name, (stale, stale))
    fresh = transports.write_segment(MATRIX, prefix)
    other = transports.new_prefix()
    foreign = transports.write_segment(MATRIX, other)
    try:
        assert transports.reap(prefix, ttl=60) == 1
        assert [p.name for p in transports.segments(prefix)] == [fresh.name]
        assert len(transports.segments(other)) == 1
    finally:
        transports.sweep(other)
    del foreign
