"""Moving the [count, dim] float32 matrix from a worker to the frontend.

- base64: the worker turns the whole matrix into little-endian float32 bytes in one numpy
  operation and base64-encodes one string per input; the frontend passes those strings through
  to base64 clients and decodes them only for float clients.
- shm: the worker writes the matrix into a fresh POSIX shared-memory segment and sends only a
  handle {name, count, dim, dtype}; the frontend validates the handle, copies the matrix out and
  unlinks the segment (it owns cleanup). A reaper unlinks segments older than a TTL, so a frontend
  that dies between write and read leaks nothing for long.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import re
import time
import uuid
from dataclasses import dataclass
from multiprocessing import resource_tracker, shared_memory
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Float32Matrix = npt.NDArray[np.float32]  # what workers compute and transports carry
WIRE_DTYPE = "<f4"
SHM_DIR = Path("/dev/shm")
MAX_SEGMENT_BYTES = 1 << 30  # no honest embeddings answer is near 1 GiB
PREFIX, PROBE_PREFIX = "ecf_", "ecfprobe_"
NONCE_BYTES = 16
# A probe without its nonce this old was left by a frontend killed while it made the probe.
UNFINISHED_PROBE_AGE = 60.0
LOCKED_PROBE = re.compile(PROBE_PREFIX + r"\d+_[0-9a-f]{8}_")  # probe_name(new_prefix())
_NAME = re.compile(r"[A-Za-z0-9_]+")


class TransportError(Exception):
    """A worker's answer that the frontend refuses to read."""


def to_wire_bytes(matrix: npt.NDArray[Any]) -> bytes:
    """Little-endian float32 bytes of the whole matrix, in one numpy operation."""
    return np.ascontiguousarray(matrix, dtype=WIRE_DTYPE).tobytes()


def encode_items(matrix: Float32Matrix, rows: list[int]) -> list[bytes]:
    """One base64 string per input: ``rows[i]`` consecutive rows each."""
    raw = memoryview(to_wire_bytes(matrix))
    row_bytes = matrix.shape[1] * 4 if matrix.ndim == 2 else 0
    items, start = [], 0
    for count in rows:
        end = start + count * row_bytes
        items.append(base64.b64encode(raw[start:end]))
        start = end
    return items


def decode_items(items: list[bytes], dim: int) -> Float32Matrix:
    """The matrix behind per-input base64 strings (the frontend's float path)."""
    raw = b"".join(base64.b64decode(item) for item in items)
    return np.frombuffer(raw, dtype=WIRE_DTYPE).reshape(-1, dim)


@dataclass(frozen=True)
class ShmHandle:
    name: str
    count: int
    dim: int
    dtype: str = WIRE_DTYPE

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "count": self.count, "dim": self.dim, "dtype": self.dtype}


def new_prefix() -> str:
    """A per-server prefix: the frontend reads, and the reaper deletes, only its own segments.
    It names the process that made it (the frontend), for whoever looks into /dev/shm."""
    return f"{PREFIX}{os.getpid()}_{uuid.uuid4().hex[:8]}_"


def probe_name(prefix: str) -> str:
    """The frontend's probe segment: outside its prefix, so that the workers' reaper never takes
    it from under a late joiner."""
    return PROBE_PREFIX + prefix.removeprefix(PREFIX)


def make_probe(prefix: str, nonce: str) -> tuple[shared_memory.SharedMemory, int]:
    """The probe segment a worker must find, holding ``nonce``, and a lock on it that the
    frontend holds for as long as it lives (the kernel drops it however the frontend ends):
    a probe nobody holds is a sign of a frontend that was killed (see sweep_abandoned)."""
    name = probe_name(prefix)
    probe = shared_memory.SharedMemory(create=True, size=64, name=name)
    lock = os.open(SHM_DIR / name, os.O_RDONLY)  # not inherited by the workers we start
    fcntl.flock(lock, fcntl.LOCK_SH)
    probe.buf[:NONCE_BYTES] = nonce.encode()  # type: ignore[index]  # written once locked
    return probe, lock


def sweep_abandoned() -> list[str]:
    """Unlink the probes of frontends that were killed (a SIGKILL leaves them: nothing of the
    frontend runs, and its workers may not have learnt the probe's name yet), with every segment
    of their prefix; return the probes swept."""
    swept = []
    for probe in probes():
        if abandoned(probe):
            sweep(PREFIX + probe.name.removeprefix(PROBE_PREFIX))
            discard_segment(probe.name)
            swept.append(probe.name)
    return swept


def probes() -> list[Path]:
    """The probes of this version's frontends (one that names no pid is an older version's,
    which holds no lock on it: never swept)."""
    if not SHM_DIR.is_dir():
        return []
    return sorted(p for p in SHM_DIR.glob(PROBE_PREFIX + "*") if LOCKED_PROBE.fullmatch(p.name))


def abandoned(probe: Path) -> bool:
    """Whether the frontend of ``probe`` is gone. A live one holds a lock on it, and one making
    it has not written its nonce yet: both are left alone."""
    try:
        handle = os.open(probe, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        finished = os.pread(handle, NONCE_BYTES, 0).strip(b"\0") != b""
        return finished or time.time() - os.fstat(handle).st_ctime > UNFINISHED_PROBE_AGE
    finally:
        os.close(handle)  # and with it the lock we may have taken


def write_segment(matrix: Float32Matrix, prefix: str) -> ShmHandle:
    """Worker side: copy the matrix into a fresh segment the frontend will own."""
    count, dim = matrix.shape
    size = max(count * dim * 4, 1)  # a zero-size segment cannot be created
    segment = shared_memory.SharedMemory(create=True, size=size, name=prefix + uuid.uuid4().hex)
    # The frontend unlinks it; without this, this process's resource tracker would unlink it
    # at exit (racing the frontend) or warn about a "leak" it does not own.
    resource_tracker.unregister(segment._name, "shared_memory")  # type: ignore[attr-defined]
    try:
        np.ndarray((count, dim), dtype=WIRE_DTYPE, buffer=segment.buf)[:] = matrix
    finally:
        segment.close()
    return ShmHandle(segment.name, count, dim)


def validate_handle(handle: dict[str, Any], prefix: str) -> ShmHandle:
    """Frontend side: refuse names outside our prefix (no '/', '..' or NUL) and absurd sizes."""
    name, count, dim = handle.get("name"), handle.get("count"), handle.get("dim")
    if not isinstance(name, str) or not name.startswith(prefix) or not _NAME.fullmatch(name):
        raise TransportError(f"refusing shared-memory name {name!r}")
    if type(count) is not int or type(dim) is not int or count < 0 or dim < 1:
        raise TransportError(f"bad shape {count!r} x {dim!r}")
    if handle.get("dtype") != WIRE_DTYPE:
        raise TransportError(f"unexpected dtype {handle.get('dtype')!r}")
    if count * dim * 4 > MAX_SEGMENT_BYTES:
        raise TransportError(f"segment of {count * dim * 4} bytes is over the cap")
    return ShmHandle(name, count, dim)


def read_segment(handle: ShmHandle, unlink: bool = True) -> Float32Matrix:
    """Frontend side: copy the matrix out, then unlink the segment."""
    segment = shared_memory.SharedMemory(name=handle.name)
    try:
        expected = handle.count * handle.dim * 4
        if segment.size < expected:
            raise TransportError(f"segment holds {segment.size} bytes, handle says {expected}")
        view = np.ndarray((handle.count, handle.dim), dtype=WIRE_DTYPE, buffer=segment.buf)
        matrix = view.copy()
        del view  # release the buffer before close()
    finally:
        segment.close()
        if unlink:
            segment.unlink()
        else:  # the leak fault: keep the tracker from cleaning up behind the bug
            resource_tracker.unregister(segment._name, "shared_memory")  # type: ignore[attr-defined]
    return matrix


def discard_segment(name: str) -> None:
    """Unlink a segment nobody will read (its request was abandoned)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(SHM_DIR / name)


def segments(prefix: str) -> list[Path]:
    if not SHM_DIR.is_dir():
        return []
    return [path for path in SHM_DIR.iterdir() if path.name.startswith(prefix)]


def reap(prefix: str, ttl: float) -> int:
    """Unlink this server's segments older than ``ttl`` seconds; return how many."""
    now, reaped = time.time(), 0
    for path in segments(prefix):
        try:
            if now - path.stat().st_mtime > ttl:
                path.unlink()
                reaped += 1
        except FileNotFoundError:
            continue  # the frontend got there first
    return reaped


def sweep(prefix: str) -> int:
    """Unlink every segment of this server (at shutdown)."""
    return reap(prefix, ttl=-1.0)
