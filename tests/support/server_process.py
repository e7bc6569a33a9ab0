"""Start a test server module as a subprocess and wait until it listens."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def running_server(module: str, *args: str) -> Iterator[str]:
    """Yield the base URL that ``python -m module --port 0`` announces; stop it on exit."""
    process = subprocess.Popen(
        [sys.executable, "-m", module, "--port", "0", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # blocks until the server is ready and the port bound
    try:
        if not line.startswith("LISTENING "):
            raise RuntimeError(f"{module} did not start (exit {process.poll()}): {line!r}")
        yield line.split()[1]
    finally:
        process.terminate()
        process.wait(timeout=30)
