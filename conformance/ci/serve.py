"""A server a CI job starts for the run (bare vLLM in the job itself, say): started in a session
of its own with its output in a log, waited for until its ready URL answers 200, and stopped
with everything it spawned."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

POLL_SECONDS = 1.0
STOP_GRACE_SECONDS = 20.0


class ServeError(Exception):
    """The server did not come up; the message says why, with the end of its log."""


def start(command: str, ready_url: str, timeout: float, log: Path, pid_file: Path) -> float:
    """Start ``command`` (a shell command line) and wait until ``ready_url`` answers 200.
    Returns the seconds it took. The process group's id goes to ``pid_file`` for stop()."""
    log.parent.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with log.open("ab") as output:
        process = subprocess.Popen(
            command,
            shell=True,
            executable="/bin/bash",
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends all it spawned
        )
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(f"{process.pid}\n", encoding="utf-8")
    while time.monotonic() - began < timeout:
        if process.poll() is not None:
            stop(pid_file)
            raise ServeError(
                f"the server command exited with status {process.returncode} before "
                f"{ready_url} answered:\n{tail(log)}"
            )
        if answers(ready_url):
            return time.monotonic() - began
        time.sleep(POLL_SECONDS)
    stop(pid_file)
    raise ServeError(f"{ready_url} did not answer 200 within {timeout:.0f} s:\n{tail(log)}")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def stop(pid_file: Path) -> bool:
    """Stop the process group start() recorded (SIGTERM, then SIGKILL after a grace period)
    and remove ``pid_file``. False when there was nothing to stop."""
    try:
        group = int(pid_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    try:
        os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        while time.monotonic() < deadline and _alive(group):
            time.sleep(0.2)
        if _alive(group):
            os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _reap(group)
    pid_file.unlink(missing_ok=True)
    return True


def _alive(group: int) -> bool:
    _reap(group)
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _reap(pid: int) -> None:
    """Collect the group leader's exit status when it is our child (start() and stop() in
    one process, as in the tests), so that it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def tail(log: Path, lines: int = 30) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.strip().splitlines()[-lines:]) or "(the log is empty)"
