"""``embedding-conformance bench serialization``: what it costs to move a [count, dim] float32
matrix out of a worker, by three ways, measured side by side (interleaved) in one run:

- per-float: each float packed alone (``struct.pack`` per value), then base64 per row: what a
  server that walks the vectors in Python does;
- numpy + base64: the whole matrix to little-endian float32 in one numpy operation, then base64
  per row (the reference server's base64 transport, ``transports.encode_items``);
- shared memory: written into a POSIX segment and copied out by the reader (its shm transport).

Each way's output is checked to carry the same floats before anything is timed.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import struct
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.server import transports

DIM = 384
KB = 1024
SIZES_KB = (16, 64, 256, 1024, 4096, 12288)  # 16 KB (~10 pooled vectors) to 12 MB
PREFIX = "ecf_bench_"


def per_float(matrix: np.ndarray) -> list[bytes]:
    return [
        base64.b64encode(b"".join(struct.pack("<f", float(value)) for value in row))
        for row in matrix
    ]


def numpy_base64(matrix: np.ndarray) -> list[bytes]:
    return transports.encode_items(matrix, [1] * matrix.shape[0])


def shared_memory(matrix: np.ndarray) -> np.ndarray:
    handle = transports.write_segment(matrix, PREFIX)
    return transports.read_segment(handle)


WAYS: dict[str, Callable[[np.ndarray], Any]] = {
    "per-float": per_float,
    "numpy+base64": numpy_base64,
    "shm": shared_memory,
}


def _floats(output: Any, dim: int) -> np.ndarray:
    if isinstance(output, np.ndarray):
        return output
    return transports.decode_items(output, dim)


def measure(size_kb: int, rounds: int) -> dict[str, float]:
    """Median milliseconds per way for a payload of ``size_kb`` KB."""
    count = max(1, size_kb * KB // (DIM * 4))
    matrix = np.random.default_rng(size_kb).standard_normal((count, DIM)).astype(np.float32)
    for name, way in WAYS.items():  # the same floats out of every way, before timing
        if not np.array_equal(_floats(way(matrix), DIM), matrix):
            raise AssertionError(f"{name} changed the floats")
    times: dict[str, list[float]] = {name: [] for name in WAYS}
    for _ in range(rounds):
        for name, way in WAYS.items():  # interleaved: the machine's noise hits all alike
            started = time.perf_counter()
            way(matrix)
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="embedding-conformance bench serialization",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per size (default 7)")
    parser.add_argument(
        "--sizes-kb",
        default=",".join(map(str, SIZES_KB)),
        help="payload sizes in KB (default 16,64,256,1024,4096,12288)",
    )
    args = parser.parse_args(argv)
    sizes = [int(part) for part in args.sizes_kb.split(",") if part.strip()]
    print(f"{'payload':>9} {'per-float ms':>13} {'numpy+base64 ms':>16} {'shm ms':>9} {'ratio':>7}")
    for size in sizes:
        row = measure(size, args.rounds)
        ratio = row["per-float"] / row["numpy+base64"]
        print(
            f"{size:>7}KB {row['per-float']:>13.2f} {row['numpy+base64']:>16.3f} "
            f"{row['shm']:>9.3f} {ratio:>6.0f}x",
            flush=True,
        )
    return 0
