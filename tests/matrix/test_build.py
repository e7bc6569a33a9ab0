"""The harness leaves nothing running: a peer that exits at once, one that never gets ready
(with a grandchild in a session of its own), and one that serves are all stopped whole, and
the first two are columns that say so, not a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conformance.matrix import peers, processes, verify
from conformance.matrix.build import build

PYTHON = "{python}"
EXITS_AT_ONCE = 'import sys; print("cannot load the model", flush=True); sys.exit(3)'
NEVER_READY = (
    "import subprocess, sys, time, pathlib; "
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
    "start_new_session=True); "
    "pathlib.Path('pids').write_text(str(child.pid)); time.sleep(600)"
)


def process(*argv: str, ready: str = "http://127.0.0.1:{port}/") -> peers.Process:
    return peers.Process(argv=argv, ready=ready, environment=peers.PROJECT)


def peer(name: str, *procs: peers.Process, unavailable: str = "") -> peers.Peer:
    return peers.Peer(
        name=name,
        title=name.title(),
        package="embedding-conformance",
        homepage="https://example.org",
        endpoint="http://127.0.0.1:{port}",
        model="all-MiniLM-L6-v2",
        processes=procs,
        start_timeout=4,
        unavailable=unavailable,
    )


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def values(tmp_path: Path) -> dict[str, str]:
    port, port2, port3 = processes.free_ports(3)
    return {"port": str(port), "port2": str(port2), "port3": str(port3), "work": str(tmp_path)}


def test_a_serving_peer_is_stopped_whole(tmp_path: Path) -> None:
    given = values(tmp_path)
    server = process(PYTHON, "-m", "http.server", "{port}", "--bind", "127.0.0.1")
    pythons = {peers.PROJECT: Path(sys.executable)}
    with processes.serving([server], given, pythons, tmp_path / "log", 30) as startup:
        assert startup < 30
        assert processes.is_listening(int(given["port"]))
        (pid,) = processes.descendants(os.getpid()) & _servers(given["port"])
    assert not processes.is_listening(int(given["port"]))
    assert not alive(pid)


LEAVES_A_TEMP_FILE = (
    "import pathlib, tempfile, time; "
    "left = pathlib.Path(tempfile.mkstemp(suffix='.sock')[1]); "
    "pathlib.Path('left').write_text(str(left)); time.sleep(600)"
)


def test_a_peers_temp_files_are_removed_with_it(tmp_path: Path) -> None:
    """vLLM leaves IPC sockets and compile folders in its temp directory: a peer gets its own."""
    given = values(tmp_path)
    pythons = {peers.PROJECT: Path(sys.executable)}
    litters = process(PYTHON, "-c", LEAVES_A_TEMP_FILE, ready="")
    with processes.serving([litters], given, pythons, tmp_path / "log", 30):
        deadline = time.monotonic() + 20
        while not (tmp_path / "left").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = Path((tmp_path / "left").read_text())
        assert left.exists()
        assert left.parent != Path(tempfile.gettempdir())
    assert not left.exists()
    assert not left.parent.exists()


def _servers(port: str) -> set[int]:
    """Pids whose command line serves ``port``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"http.server" in argv and port.encode() in argv:
                found.add(int(entry.name))
    return found


def test_a_peer_that_never_gets_ready_is_stopped_with_its_grandchild(tmp_path: Path) -> None:
    given = values(tmp_path)
    pythons = {peers.PROJECT: Path(sys.executable)}
    wedged = process(PYTHON, "-c", NEVER_READY)
    started = time.monotonic()
    with (
        pytest.raises(processes.StartError, match="did not answer ready in time"),
        processes.serving([wedged], given, pythons, tmp_path / "log", 3),
    ):
        pass
    assert time.monotonic() - started < 30
    grandchild = int((tmp_path / "pids").read_text())
    assert not alive(grandchild)


def test_a_build_lists_peers_that_did_not_come_up(tmp_path: Path) -> None:
    catalogue = peers.Catalogue(
        environments={},
        peers=(
            peer("exits", process(PYTHON, "-c", EXITS_AT_ONCE)),
            peer("elsewhere", process(PYTHON, "-c", "pass"), unavailable="needs a GPU"),
        ),
    )
    out, lines = tmp_path / "published", []
    before = processes.descendants(os.getpid())
    outcomes = build(catalogue, [], out, tmp_path / "cache", lines.append)
    assert [(o.name, o.state) for o in outcomes] == [
        ("exits", "did not start"),
        ("elsewhere", "unavailable"),
    ]
    assert "exited with code 3" in outcomes[0].reason
    assert processes.descendants(os.getpid()) <= before  # nothing of theirs still runs
    assert any(line.startswith("[1/2] exits: did not start") for line in lines), lines
    manifest = json.loads((out / "matrix.json").read_text())
    assert [entry["state"] for entry in manifest["peers"]] == ["did not start", "unavailable"]
    readme = (out / "README.md").read_text()
    assert "did not start: python -c ... exited with code 3; last output: cannot load" in readme
    assert "unavailable: needs a GPU" in readme
    assert "NO RESULTS" in (out / "index.html").read_text()
    assert verify.problems(out) == []
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".published-")]


# The build as a terminal runs it, Ctrl-C raising KeyboardInterrupt: whatever this test run's
# own start left SIGINT as (a shell's `cmd &` starts it ignored, and children inherit that).
AS_IN_A_TERMINAL = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_build_stops_its_peer_and_publishes_nothing(
    tmp_path: Path, signum: signal.Signals
) -> None:
    peers_file = tmp_path / "peers.toml"
    peers_file.write_text(
        f"""
[[peer]]
name = "slow"
title = "Slow"
package = "embedding-conformance"
homepage = "https://example.org"
environment = "project"
endpoint = "http://127.0.0.1:{{port}}"
model = "all-MiniLM-L6-v2"

[[peer.process]]
argv = ["{{python}}", "-c", {json.dumps(NEVER_READY)}]
ready = "http://127.0.0.1:{{port}}/health"
"""
    )
    out, cache = tmp_path / "published", tmp_path / "cache"
    command = [sys.executable, "-c", AS_IN_A_TERMINAL, "matrix", "build"]
    command += ["--peers", str(peers_file), "--cache", str(cache), "--out", str(out)]
    build_process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    pids = cache / "slow" / "work" / "pids"
    deadline = time.monotonic() + 60
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    server = next(iter(processes.descendants(build_process.pid)))
    build_process.send_signal(signum)
    output, _ = build_process.communicate(timeout=60)
    assert build_process.returncode == 130, output
    assert "every started peer was stopped" in output
    assert not alive(server) and not alive(int(pids.read_text()))
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "peers.toml"]  # no staging


DAEMONIZES = (
    "import os, pathlib, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        pathlib.Path('daemon').write_text(str(os.getpid()))\n"
    "        time.sleep(600)\n"
    "    os._exit(0)\n"
    "time.sleep(600)\n"
)


def test_a_daemon_that_left_its_session_and_parent_is_stopped_too(tmp_path: Path) -> None:
    given = values(tmp_path)
    pythons = {peers.PROJECT: Path(sys.executable)}
    with (
        processes.subreaper(),
        pytest.raises(processes.StartError),
        processes.serving([process(PYTHON, "-c", DAEMONIZES)], given, pythons, tmp_path / "l", 3),
    ):
        pass
    daemon = int((tmp_path / "daemon").read_text())
    assert not alive(daemon)
