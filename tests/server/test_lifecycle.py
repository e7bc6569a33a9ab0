"""The reference server's life from start to stop: a start that cannot succeed says why in one
line and ends at once; a worker that keeps dying is restarted after growing pauses, then given
up; SIGTERM and SIGINT end the server in every state, workers included, leaving no socket,
segment or process; what a killed start left is swept by the next start."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import requests

from conformance import variants
from conformance.runtime_dir import private_dir
from conformance.server import transports
from conformance.server.process import ServerProcess
from tests.server.test_machinery import (
    LONG_BATCH,
    embed,
    group_members,
    health,
    running,
    wait_for,
)
from tests.support.server_process import REPO

SHM = Path("/dev/shm")
# Start-up without a model: imports and the pins checked, no torch (seconds on any machine).
QUICK_START = 20.0
# A stop: uvicorn's graceful 5 s and the workers' grace (pool.STOP_GRACE), with room to spare.
BOUNDED_STOP = 30.0


def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``embedding-conformance serve`` as a user runs it, its output read by the test."""
    return subprocess.Popen(
        [sys.executable, "-m", "conformance.server", "--port", "0", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def of_frontend(pid: int) -> list[str]:
    """Shared-memory names of the frontend with this pid: its probe and its segments."""
    mine = (f"{transports.PREFIX}{pid}_", f"{transports.PROBE_PREFIX}{pid}_")
    return sorted(path.name for path in SHM.iterdir() if path.name.startswith(mine))


def children(pid: int) -> list[int]:
    """Its child processes: workers, and the shared-memory resource tracker."""
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in found]


def workers_of(pid: int) -> list[int]:
    """Its local workers, loading or serving."""
    found = []
    for child in children(pid):
        with contextlib.suppress(FileNotFoundError):
            if b"conformance.server.worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
    return found


def left_behind(frontend: int, workers: list[int]) -> list[str]:
    """What a stopped server left, once its processes had a moment to end (the shared-memory
    resource tracker ends when it sees the frontend gone): its worker socket, its probe or
    segments, a worker or any process of a worker's group."""
    deadline = time.monotonic() + 5
    while (left := _left_behind(frontend, workers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _left_behind(frontend: int, workers: list[int]) -> list[str]:
    left = [f"segment {name}" for name in of_frontend(frontend)]
    if (private_dir() / f"ecf-{frontend}.sock").exists():
        left.append("the worker socket")
    left += [f"worker {pid}" for pid in workers if running(pid) or group_members(pid)]
    return left


@contextlib.contextmanager
def reaped(process: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """Never leave the server or its workers running, whatever the test found."""
    workers: list[int] = []
    try:
        yield process
    finally:
        with contextlib.suppress(FileNotFoundError):
            workers = children(process.pid)
        process.kill()
        process.communicate()
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def test_a_name_it_cannot_serve_ends_the_start_at_once_in_one_line(tmp_path: Path) -> None:
    """An unknown name, and a fetchable model not fetched yet (the exact command is named):
    exit 1 within seconds, one line, no worker started, no traceback."""
    empty_cache = {variants.CACHE_ENV: str(tmp_path)}
    for model, said in [
        ("no-such-model", "'no-such-model' is neither a model this server knows"),
        ("all-mpnet-base-v2", "'embedding-conformance models fetch all-mpnet-base-v2'"),
        ("nomic-embed-text-v1.5-gguf", "serves the same weights converted to float32"),
    ]:
        began = time.monotonic()
        with reaped(serve("--model", model, env=empty_cache)) as server:
            out, err = server.communicate(timeout=QUICK_START)
        assert server.returncode == 1, err
        assert time.monotonic() - began < QUICK_START
        assert out == ""  # no LISTENING line
        (line,) = err.strip().splitlines()
        assert line.startswith("error: ") and said in line, line


def test_a_worker_whose_model_does_not_load_fails_the_start_with_its_reason(
    tmp_path: Path,
) -> None:
    """A folder that is no model passes the name check; its worker fails to load it, says why
    and exits; the frontend ends the start with that reason (no restart loop), and nothing of
    the server is left."""
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    with reaped(serve("--model", str(not_a_model), "--transport", "shm")) as server:
        out, err = server.communicate(timeout=120)
    assert server.returncode == 1, err
    assert out == ""
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "did not load its model" in errors[0], err
    assert err.count("Traceback") <= 1  # the worker's own, once: it was not started again
    assert left_behind(server.pid, []) == []


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_while_the_worker_loads_stops_everything(stop_signal: int) -> None:
    with reaped(serve("--transport", "shm")) as server:
        wait_for(lambda: workers_of(server.pid), timeout=QUICK_START)
        time.sleep(1)  # importing its libraries
        workers = children(server.pid)
        server.send_signal(stop_signal)
        out, err = server.communicate(timeout=BOUNDED_STOP)
    assert server.returncode in (0, -stop_signal), err
    assert "LISTENING" not in out
    assert left_behind(server.pid, workers) == []


def test_sigterm_while_a_long_request_computes_stops_everything() -> None:
    """Draining: the request in flight is given uvicorn's grace, then the worker is stopped in
    the middle of its forward pass."""
    server = ServerProcess("--transport", "shm", cwd=str(REPO))
    url = server.start()
    process = server.process
    assert process is not None
    try:
        workers = [found["pid"] for found in health(url)["workers"]]
        thread = threading.Thread(target=answered_or_cut, args=(url, LONG_BATCH))
        thread.start()
        time.sleep(1)  # the worker is computing
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=BOUNDED_STOP)
        thread.join(timeout=BOUNDED_STOP)
    finally:
        server.stop()
    assert left_behind(process.pid, workers) == []


def answered_or_cut(url: str, input: list[str]) -> None:
    """A request the server may answer (503 once its worker is stopped) or cut off."""
    with contextlib.suppress(requests.ConnectionError):
        embed(url, input)


def model_link(tmp_path: Path) -> Path:
    """The bundled model under a folder of the test's: removing it makes every later load of
    the model fail, as a model folder deleted under a running server does."""
    link = tmp_path / "model"
    link.symlink_to(variants.encoder_dir())
    return link


def crashing_server(tmp_path: Path, *args: str) -> tuple[ServerProcess, int]:
    """A serving server whose worker was killed and whose model folder is gone: each restart
    of the worker fails. Returns the server and the killed worker's pid."""
    link = model_link(tmp_path)
    server = ServerProcess("--transport", "shm", "--model", str(link), *args, cwd=str(REPO))
    url = server.start()
    try:
        (worker,) = [found["pid"] for found in health(url)["workers"]]
        link.unlink()
        os.kill(worker, signal.SIGKILL)
    except BaseException:  # never leave the server running
        server.stop()
        raise
    return server, worker


def test_sigterm_while_the_worker_crash_loops_stops_everything(tmp_path: Path) -> None:
    server, killed = crashing_server(tmp_path)
    process = server.process
    assert process is not None
    try:
        wait_for(lambda: any("restarting it in" in line for line in server.stderr_tail), 120)
        workers = [killed, *children(process.pid)]
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=BOUNDED_STOP)
    finally:
        server.stop()
    assert left_behind(process.pid, workers) == []
    said = "\n".join(server.stderr_tail)
    assert "did not load its model" in said and "given up" not in said


def test_a_worker_that_keeps_dying_is_given_up_and_the_server_stops_naming_why(
    tmp_path: Path,
) -> None:
    server, killed = crashing_server(tmp_path, "--max-restarts", "1")
    process = server.process
    assert process is not None
    try:
        assert process.wait(timeout=120) == 1
    finally:
        server.stop()
    (line,) = [text for text in server.stderr_tail if text.startswith("error: ")]
    assert "did not load its model" in line and "given up after 1 restart within" in line, line
    assert left_behind(process.pid, [killed]) == []


def test_a_start_killed_outright_leaves_a_probe_the_next_start_sweeps(tmp_path: Path) -> None:
    """SIGKILL while the worker loads: nothing of the frontend runs, its worker has not heard
    of the probe yet, and the probe stays in /dev/shm; the next start removes it (or another
    server's start, if one beats ours to it)."""
    with reaped(serve("--transport", "shm")) as killed:
        wait_for(lambda: workers_of(killed.pid), timeout=QUICK_START)  # after the probe
        workers = children(killed.pid)
        killed.kill()
        killed.wait()
        wait_for(lambda: not any(running(pid) for pid in workers), timeout=10)
    # What a SIGKILL leaves: the probe (unless another test's server started and swept it)
    assert all(name.startswith(transports.PROBE_PREFIX) for name in of_frontend(killed.pid))
    # A frontend for remote workers only: it starts its pool (and so sweeps) without a model.
    socket_file = tmp_path / "workers.sock"
    address = f"ipc://{socket_file}"
    with reaped(serve("--workers", "0", "--worker-address", address, "--transport", "shm")) as nxt:
        wait_for(socket_file.exists, timeout=QUICK_START)  # bound: the sweep comes next
        wait_for(lambda: of_frontend(killed.pid) == [], timeout=QUICK_START)
        nxt.send_signal(signal.SIGTERM)
        _, err = nxt.communicate(timeout=BOUNDED_STOP)
    assert nxt.returncode in (0, -signal.SIGTERM), err
    assert left_behind(nxt.pid, []) == []


def test_a_live_servers_probe_is_never_swept() -> None:
    prefix = transports.new_prefix()
    probe, lock = transports.make_probe(prefix, "0123456789abcdef")
    segment = transports.write_segment(np.zeros((2, 3), dtype=np.float32), prefix)
    try:
        assert probe.name not in transports.sweep_abandoned()
        assert {probe.name, segment.name} <= {path.name for path in SHM.iterdir()}
    finally:
        os.close(lock)  # as a killed frontend's lock goes
    assert probe.name in transports.sweep_abandoned()
    assert not (SHM / probe.name).exists() and not (SHM / segment.name).exists()
    probe.close()


def test_an_older_versions_probe_is_never_swept() -> None:
    """Before this version a frontend held no lock on its probe (named without its pid): a
    server started beside a running older one must leave that one's probe alone."""
    older = transports.shared_memory.SharedMemory(
        create=True, size=64, name="ecfprobe_0123456789ab_"
    )
    try:
        older.buf[:16] = b"0123456789abcdef"  # type: ignore[index]
        assert older.name not in transports.sweep_abandoned()
        assert (SHM / older.name).exists()
    finally:
        older.close()
        older.unlink()
