"""The reference server (or any server module that announces ``LISTENING URL``) as a child
process: started on a free port, waited for, stopped. Used by ``--endpoint builtin``, the bench
and the project's tests."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from types import TracebackType

START_TIMEOUT = 300.0  # a worker loads the model before the server announces itself


class ServerProcess:
    def __init__(
        self, *args: str, module: str = "conformance.server", cwd: str | None = None
    ) -> None:
        self.command = [sys.executable, "-m", module, "--port", "0", *args]
        self.cwd = cwd
        self.process: subprocess.Popen[str] | None = None
        self.url = ""

    def start(self, timeout: float = START_TIMEOUT) -> str:
        """Start it and return its base URL; RuntimeError if it does not announce one."""
        self.process = subprocess.Popen(
            self.command, cwd=self.cwd, stdout=subprocess.PIPE, text=True
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_forward, args=(self.process, lines), daemon=True).start()
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            line = ""
        if not line.startswith("LISTENING "):
            self.stop()
            raise RuntimeError(f"{' '.join(self.command[2:])} did not start: {line.strip()!r}")
        self.url = line.split()[1]
        return self.url

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()  # the reference server's shutdown unlinks its segments
        try:
            self.process.wait(timeout=30)
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


def _forward(process: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    """Hand over the first line, then drain stdout so the child never blocks on a full pipe."""
    assert process.stdout is not None
    lines.put(process.stdout.readline())
    for _ in process.stdout:
        pass
