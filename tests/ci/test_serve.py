"""`ci serve` / `ci stop`: a server command that never gets ready, or dies, is reported with the
end of its log and leaves no process behind; stop ends the whole process group."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conformance.ci import serve

CLOSED = "http://127.0.0.1:9/health"  # the discard port: nothing answers


def test_a_command_that_exits_is_reported_with_its_log(tmp_path: Path) -> None:
    log, pid_file = tmp_path / "server.log", tmp_path / "server.pid"
    with pytest.raises(serve.ServeError) as failed:
        serve.start("echo 'no model named x'; exit 3", CLOSED, 30, log, pid_file)
    message = str(failed.value)
    assert message.startswith(f"the server command exited with status 3 before {CLOSED}")
    assert message.endswith("no model named x")
    assert not pid_file.exists()


def test_a_command_never_ready_is_stopped_with_all_it_spawned(tmp_path: Path) -> None:
    log, pid_file, child = tmp_path / "server.log", tmp_path / "server.pid", tmp_path / "child"
    command = f"sleep 300 & echo $! > {child}; echo loading; wait"
    with pytest.raises(serve.ServeError, match=r"did not answer 200 within 1 s:\nloading$"):
        serve.start(command, CLOSED, 1, log, pid_file)
    spawned = int(child.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists(f"/proc/{spawned}"):
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{spawned}")  # the grandchild went with the group
    assert not pid_file.exists()


def test_stop_without_a_server_says_so(tmp_path: Path) -> None:
    assert serve.stop(tmp_path / "absent.pid") is False
