"""``--endpoint builtin[:base64|:shm]``: run the bundled reference server for one test session."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading

import pytest

PREFIX = "builtin"
TRANSPORTS = {
    "builtin": "auto",
    "builtin:auto": "auto",
    "builtin:base64": "base64",
    "builtin:shm": "shm",
}
START_TIMEOUT = 300.0


def builtin_transport(endpoint: str) -> str | None:
    """The transport a 'builtin...' endpoint asks for, or None for a real URL."""
    if not endpoint.startswith(PREFIX):
        return None
    if endpoint not in TRANSPORTS:
        raise pytest.UsageError(
            f"--endpoint {endpoint!r}: use builtin, builtin:base64 or builtin:shm"
        )
    return TRANSPORTS[endpoint]


class BuiltinServer:
    """The server as a child process on a free port; stopped (and its shm swept) at the end."""

    def __init__(self, transport: str) -> None:
        self.transport = transport
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> str:
        command = [
            sys.executable,
            "-m",
            "conformance.server",
            "--port",
            "0",
            "--transport",
            self.transport,
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_forward, args=(self.process, lines), daemon=True).start()
        try:
            line = lines.get(timeout=START_TIMEOUT)
        except queue.Empty:
            line = ""
        if not line.startswith("LISTENING "):
            self.stop()
            raise pytest.UsageError(
                f"the built-in server did not start: {line.strip()!r} "
                "(is the 'server' extra installed? pip install "
                "'embedding-conformance[server]')"
            )
        return line.split()[1]

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()  # its shutdown unlinks every segment it owns
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _forward(process: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    """Hand over the first line, then drain stdout so the child never blocks on a full pipe."""
    assert process.stdout is not None
    lines.put(process.stdout.readline())
    for _ in process.stdout:
        pass
