"""The reference server (or any server module that announces ``LISTENING URL``) as a child
process: started on a free port, waited for, stopped. Used by ``--endpoint builtin``, the bench
and the project's tests.

Its stderr passes through to ours as it comes, and its last lines are kept: a server that does
not start is reported with the line in which it said why (``error: ...``)."""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterable
from types import TracebackType

START_TIMEOUT = 300.0  # a worker loads the model before the server announces itself
STOP_TIMEOUT = 30.0  # after SIGTERM, before SIGKILL
KEPT_LINES = 50


class ServerStartError(RuntimeError):
    """The server did not announce itself; ``reason`` says why, in its own words if it gave
    any."""

    def __init__(self, command: str, reason: str) -> None:
        super().__init__(f"{command} did not start: {reason}")
        self.reason = reason


class ServerProcess:
    def __init__(
        self, *args: str, module: str = "conformance.server", cwd: str | None = None
    ) -> None:
        self.command = [sys.executable, "-m", module, "--port", "0", *args]
        self.cwd = cwd
        self.process: subprocess.Popen[str] | None = None
        self.url = ""
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=KEPT_LINES)

    def start(self, timeout: float = START_TIMEOUT) -> str:
        """Start it and return its base URL; ServerStartError if it does not announce one."""
        self.process = subprocess.Popen(
            self.command, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_forward, args=(self.process, lines), daemon=True).start()
        assert self.process.stderr is not None
        self._stderr = threading.Thread(
            target=_pass_through, args=(self.process.stderr, self.stderr_tail), daemon=True
        )
        self._stderr.start()
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise ServerStartError(
                " ".join(self.command[2:]), f"no LISTENING line within {timeout:g} s"
            ) from None
        if not line.startswith("LISTENING "):
            reason = self._why_not_started(line)
            self.stop()
            raise ServerStartError(" ".join(self.command[2:]), reason)
        self.url = line.split()[1]
        return self.url

    def _why_not_started(self, line: str) -> str:
        """The server's own 'error:' line, else how it ended, else what it printed."""
        assert self.process is not None
        if line == "":  # stdout closed: it has ended, or is ending
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
            else:
                self._stderr.join(timeout=5)
        said = [text for text in self.stderr_tail if text.startswith("error:")]
        if said:
            return said[-1].removeprefix("error:").strip()
        if self.process.returncode is not None:
            last = next((text for text in reversed(self.stderr_tail) if text.strip()), "")
            return f"it exited with code {self.process.returncode}" + (f": {last}" if last else "")
        return repr(line.strip()) if line else "it closed its output"

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()  # the reference server's shutdown unlinks its segments
        try:
            self.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()


def _pass_through(stream: Iterable[str], tail: collections.deque[str]) -> None:
    """Copy the server's stderr to our file descriptor 2 (as an inherited stderr would be: not
    into a captured sys.stderr), keeping its last lines."""
    for line in stream:
        tail.append(line.rstrip("\n"))
        with contextlib.suppress(OSError):  # our own stderr is closed: keep draining theirs
            os.write(2, line.encode(errors="replace"))


def _forward(process: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    """Hand over the first line, then drain stdout so the child never blocks on a full pipe."""
    assert process.stdout is not None
    lines.put(process.stdout.readline())
    for _ in process.stdout:
        pass
