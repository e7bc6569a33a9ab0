"""The reference server's machinery under failure: dead workers, vanished clients, shutdown,
leaks, and the choice of transport. These are faults the suite cannot see from outside."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import requests

from conformance.runtime_dir import private_dir
from conformance.server import transports
from conformance.server.pool import clear_stale_socket
from conformance.server.process import ServerProcess
from tests.conftest import reference_server
from tests.support.server_process import REPO

MODEL = "all-MiniLM-L6-v2"
SHM = Path("/dev/shm")
# Seconds of work for the worker: long enough to be killed in the middle of (after 1 s, on any
# machine); a quarter of it outlasts a client that hangs up after 0.2 s.
LONG_BATCH = [f"sentence number {i} " + "with many words " * 30 for i in range(512)]


def embed(url: str, input: Any, **params: Any) -> requests.Response:
    body = {"model": MODEL, "input": input, **params}
    return requests.post(f"{url}/v1/embeddings", json=body, timeout=120)


def send_in_background(url: str, input: Any) -> tuple[threading.Thread, list[requests.Response]]:
    answers: list[requests.Response] = []
    thread = threading.Thread(target=lambda: answers.append(embed(url, input)))
    thread.start()
    return thread, answers


def health(url: str) -> dict[str, Any]:
    return dict(requests.get(f"{url}/health", timeout=10).json())


def worker_names(url: str) -> list[str]:
    return [w["identity"] for w in health(url)["workers"]]


def segments(prefix: str) -> list[str]:
    return [p.name for p in SHM.iterdir() if p.name.startswith(prefix)]


def wait_for(condition: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.2)


# What the transport carries, in every form a request can give it: one row and many (up to
# OpenAI's 2,048 inputs), a row cut at the context, token ids, 'dimensions', base64 output, and
# answers that are errors. The suite's full run is made on one transport ('auto': shared memory
# here; tests/support/certified_run.py): that the other answers byte for byte alike is this test.
TRANSPORTED = [
    {"input": ["hello", "a longer sentence here"]},
    {"input": "hello", "encoding_format": "base64"},
    {"input": ["x", "y z"], "encoding_format": "base64", "dimensions": 32},
    {"input": [f"word{i}" for i in range(2048)]},
    {"input": [f"word{i}" for i in range(300)], "encoding_format": "base64", "dimensions": 100},
    {"input": ["short", " ".join(["long"] * 400)]},  # the second cut at 256 tokens
    {"input": [[101, 7592, 102], [101, 102]], "dimensions": 8},
    {"input": [101, 7592, 2088, 102], "encoding_format": "base64"},
    {"input": []},  # refused: 400
    {"input": [[101, 10**9]]},  # a token id past the vocabulary: refused
    {"input": ["fine"], "dimensions": 0},  # refused
]


def test_identical_bytes_from_both_transports() -> None:
    bodies: dict[str, list[tuple[int, bytes]]] = {}
    for transport in ("base64", "shm"):
        with reference_server("--transport", transport) as url:
            assert {w["transport"] for w in health(url)["workers"]} == {transport}
            answers = [embed(url, **request) for request in TRANSPORTED]
            bodies[transport] = [(answer.status_code, answer.content) for answer in answers]
            # fault routes are served only when asked for (--fault-routes)
            assert requests.get(f"{url}/faults/noise/v1/models", timeout=10).status_code == 404
    statuses = [status for status, _ in bodies["shm"]]
    assert statuses == [200] * 8 + [400] * 3, statuses
    assert bodies["base64"] == bodies["shm"]


def test_worker_killed_mid_request_gets_503_then_recovers(clean_server: str) -> None:
    (worker,) = health(clean_server)["workers"]
    slow, answers = send_in_background(clean_server, LONG_BATCH)
    time.sleep(1.0)  # the worker is busy with the long batch
    os.kill(worker["pid"], signal.SIGKILL)
    slow.join(timeout=60)
    assert answers[0].status_code == 503
    assert answers[0].json()["error"]["code"] == "worker_unavailable"
    wait_for(
        lambda: [w["pid"] for w in health(clean_server)["workers"]] not in ([], [worker["pid"]])
    )
    assert embed(clean_server, "after the restart").status_code == 200


def test_client_disconnect_mid_request_leaves_no_segment(clean_server: str) -> None:
    prefix = health(clean_server)["shm_prefix"]
    host, port = clean_server.removeprefix("http://").split(":")
    body = requests.models.complexjson.dumps({"model": MODEL, "input": LONG_BATCH[:128]}).encode()
    for _ in range(3):
        with socket.create_connection((host, int(port))) as raw:
            raw.sendall(
                b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: "
                b"application/json\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            time.sleep(0.2)  # gone before the answer
    assert embed(clean_server, "still fine").status_code == 200
    wait_for(lambda: not segments(prefix), timeout=30)


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_leaves_no_segment_and_no_socket(stop_signal: int) -> None:
    server = reference_server("--transport", "shm")
    with server as url:
        prefix = health(url)["shm_prefix"]
        assert embed(url, ["a", "b"]).status_code == 200
        process = server.process
        assert process is not None
        socket_file = worker_socket(process.pid)
        assert stat.S_ISSOCK(socket_file.lstat().st_mode)  # in the private folder
        (worker,) = health(url)["workers"]
        scratch = worker_scratch(worker["pid"])
        process.send_signal(stop_signal)
        assert process.wait(timeout=60) in (0, -stop_signal)  # uvicorn re-raises it
    assert segments(prefix) == [] and segments(probe_of(prefix)) == []
    assert not socket_file.exists()
    assert not scratch.exists()
    assert not (Path(tempfile.gettempdir()) / f"ecf-{process.pid}.sock").exists()  # nor the old


def worker_socket(frontend_pid: int) -> Path:
    """Where a frontend started without --worker-address binds for its local workers."""
    return private_dir() / f"ecf-{frontend_pid}.sock"


def worker_scratch(worker_pid: int) -> Path:
    """The temp folder (TMPDIR) a local worker was given, holding a file of its libraries'."""
    argv = Path(f"/proc/{worker_pid}/cmdline").read_bytes().decode().split("\0")
    scratch = Path(argv[argv.index("--scratch") + 1])
    assert scratch.is_dir() and scratch.parent == Path(tempfile.gettempdir())
    (scratch / "left-by-a-library").touch()  # as vLLM leaves its IPC sockets
    return scratch


def probe_of(prefix: str) -> str:
    return transports.probe_name(prefix)


def running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def group_members(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (a worker and whatever it started)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def test_a_killed_frontend_leaves_no_worker_socket_or_segment() -> None:
    """SIGKILL: the frontend cleans nothing; its orphaned worker must, then exit with its group."""
    server = reference_server("--transport", "shm")
    with server as url:
        process = server.process
        assert process is not None
        prefix = health(url)["shm_prefix"]
        (worker,) = health(url)["workers"]
        socket_file = worker_socket(process.pid)
        assert socket_file.exists()
        scratch = worker_scratch(worker["pid"])
        assert embed(url, ["a", "b"]).status_code == 200  # on shared memory
        assert group_members(worker["pid"])  # the worker leads a process group of its own
        # The frontend dies between a worker's write and its own read: a segment is left.
        left = transports.write_segment(np.zeros((2, 3), dtype=np.float32), prefix)
        assert left.name in segments(prefix) and segments(probe_of(prefix))
        process.kill()
        process.wait(timeout=10)
        try:
            wait_for(lambda: not group_members(worker["pid"]), timeout=5.0)
            assert not running(worker["pid"])
            assert not socket_file.exists()
            assert segments(prefix) == [] and segments(probe_of(prefix)) == []
            assert not scratch.exists()
        finally:  # never leave a worker behind, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker["pid"], signal.SIGKILL)


def test_a_stale_socket_file_does_not_stop_the_next_start_and_a_live_one_is_refused() -> None:
    path = private_dir() / f"ecf-test-{os.getpid()}.sock"
    address = f"ipc://{path}"
    first = reference_server("--workers", "1", "--worker-address", address)
    with first as url:
        (worker,) = health(url)["workers"]
        assert first.process is not None
        scratch = worker_scratch(worker["pid"])
        # Everything dies at once (as under 'kill -9 -1'): nobody is left to remove the file.
        os.kill(worker["pid"], signal.SIGSTOP)  # so that it cannot clean up first
        first.process.kill()
        first.process.wait(timeout=10)
        os.killpg(worker["pid"], signal.SIGKILL)
    wait_for(lambda: not group_members(worker["pid"]), timeout=10)
    shutil.rmtree(scratch)  # nobody was left to remove the workers' temp folder either
    assert stat.S_ISSOCK(path.lstat().st_mode)  # stale: a socket file nobody listens on
    second = reference_server("--worker-address", address)
    with second as url:
        assert embed(url, "after a stale socket").status_code == 200
        with pytest.raises(RuntimeError, match="did not start"):
            reference_server("--workers", "0", "--worker-address", address).start(timeout=60)
        assert embed(url, "the live one kept its socket").status_code == 200
    assert not path.exists()


def test_clearing_the_way_for_a_bind(tmp_path: Path) -> None:
    stale = str(tmp_path / "stale.sock")
    with socket.socket(socket.AF_UNIX) as gone:
        gone.bind(stale)  # closed without unlinking: what a killed process leaves
    clear_stale_socket(stale)
    assert not os.path.lexists(stale)
    clear_stale_socket(stale)  # nothing there: nothing to do
    live = str(tmp_path / "live.sock")
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(live)
        listening.listen()
        with pytest.raises(OSError, match="another server is listening"):
            clear_stale_socket(live)
        assert os.path.exists(live)
    other = tmp_path / "file"
    other.write_text("not a socket")
    with pytest.raises(OSError, match="not a socket"):
        clear_stale_socket(str(other))
    assert other.read_text() == "not a socket"


def test_leak_fault_leaks_and_clean_mode_does_not() -> None:
    with reference_server("--fault", "leak-shm") as url:
        prefix = health(url)["shm_prefix"]
        for text in ("one", "two", "three"):
            assert embed(url, text).status_code == 200
        assert len(segments(prefix)) == 3  # what the server's own test must see
    with reference_server("--transport", "shm") as url:
        prefix = health(url)["shm_prefix"]
        for text in ("one", "two", "three"):
            assert embed(url, text).status_code == 200
        assert segments(prefix) == []


def test_reaper_collects_segments_a_dead_frontend_left(clean_server: str) -> None:
    from conformance.server import transports

    prefix = health(clean_server)["shm_prefix"]
    import numpy as np

    orphan = transports.write_segment(np.zeros((2, 3), dtype=np.float32), prefix)
    stale = time.time() - 3600
    os.utime(SHM / orphan.name, (stale, stale))
    wait_for(lambda: orphan.name not in segments(prefix), timeout=30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def remote_worker(address: str, identity: str = "remote-1") -> subprocess.Popen[bytes]:
    """``embedding-conformance worker`` joining a frontend, as on another node."""
    command = ["-m", "conformance.cli", "worker", "--connect", address, "--identity", identity]
    return subprocess.Popen([sys.executable, *command], cwd=REPO)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGCONT)  # a stopped process would not see SIGTERM
        process.terminate()
        process.wait(timeout=30)


def remote_frontend(address: str) -> ServerProcess:
    """A frontend with no local worker, waiting on TCP for remote ones."""
    return reference_server("--workers", "0", "--worker-address", address)


@dataclass
class Remote:
    address: str
    frontend: ServerProcess
    worker: subprocess.Popen[bytes]  # a test may put a new one in its place
    url: str = ""


@contextmanager
def remote_setup() -> Iterator[Remote]:
    """A frontend on TCP and one remote worker ('remote-1') that joined it; both stopped after."""
    address = f"tcp://127.0.0.1:{free_port()}"
    remote = Remote(address, remote_frontend(address), remote_worker(address))
    try:
        remote.url = remote.frontend.start(timeout=120)  # announced once the worker is ready
        yield remote
    finally:
        stop(remote.worker)
        remote.frontend.stop()


def test_remote_worker_joins_over_tcp_with_base64() -> None:
    with remote_setup() as remote:
        (joined,) = health(remote.url)["workers"]
        assert joined["identity"] == "remote-1" and joined["pid"] is None
        answer = embed(remote.url, ["over", "tcp"], encoding_format="base64")
        assert answer.status_code == 200 and len(answer.json()["data"]) == 2


def test_remote_worker_killed_mid_request_gets_503_and_a_new_one_joins() -> None:
    with remote_setup() as remote:
        url = remote.url
        slow, answers = send_in_background(url, LONG_BATCH)
        time.sleep(1.0)  # the worker is busy with the long batch
        remote.worker.kill()  # as a node that goes away: nothing tells the frontend but silence
        started = time.monotonic()
        slow.join(timeout=60)
        assert answers[0].status_code == 503, answers[0].text
        error = answers[0].json()["error"]
        assert error["code"] == "worker_unavailable" and "fell silent" in error["message"]
        assert time.monotonic() - started < 10  # the silence limit (5 s), not a client timeout
        assert health(url)["workers"] == []
        nobody = embed(url, "anyone there?")  # at once, not after waiting for a worker
        assert nobody.status_code == 503 and "no worker" in nobody.json()["error"]["message"]
        remote.worker = remote_worker(remote.address)  # the node comes back under its name
        wait_for(lambda: worker_names(url) == ["remote-1"])
        assert embed(url, "after the restart").status_code == 200


def test_remote_worker_that_falls_silent_is_dropped_and_rejoins_when_it_speaks() -> None:
    with remote_setup() as remote:
        url = remote.url
        slow, answers = send_in_background(url, LONG_BATCH)
        time.sleep(1.0)
        remote.worker.send_signal(signal.SIGSTOP)  # hung, or cut off: the link stays up
        slow.join(timeout=60)
        assert answers[0].status_code == 503 and health(url)["workers"] == []
        remote.worker.send_signal(signal.SIGCONT)  # its next heartbeat gets it asked back
        wait_for(lambda: worker_names(url) == ["remote-1"])
        # Its late answer to the dropped request is thrown away; new requests are served.
        assert embed(url, ["back", "again"]).status_code == 200


def test_remote_worker_joins_a_restarted_frontend_by_itself() -> None:
    with remote_setup() as remote:
        assert embed(remote.url, "before").status_code == 200
        remote.frontend.stop()  # the worker outlives it and keeps beating at the same address
        with remote_frontend(remote.address) as url:  # announced once ours has rejoined
            assert worker_names(url) == ["remote-1"]
            assert embed(url, "after").status_code == 200
