"""Start the test model server as a subprocess and wait until it listens."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def running_model_server() -> Iterator[str]:
    """Yield the server's base URL (routes under /<mode>/v1/...); stop it on exit."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.model_server", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # blocks until the model is loaded and the port bound
    try:
        if not line.startswith("LISTENING "):
            raise RuntimeError(f"model server did not start (exit {process.poll()}): {line!r}")
        yield line.split()[1]
    finally:
        process.terminate()
        process.wait(timeout=30)
