"""Shared fixtures of the project's own tests: a real model server, and a way to run the suite."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent
SERVER_START_TIMEOUT = 180.0


@pytest.fixture(scope="session")
def model_server() -> Iterator[str]:
    """Base URL of a real server over all-MiniLM-L6-v2 (routes under /<mode>/v1/...)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.model_server", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()  # blocks until the model is loaded and the port bound
    if not line.startswith("LISTENING "):
        process.kill()
        pytest.fail(f"model server did not start: {line!r}")
    try:
        yield line.split()[1]
    finally:
        process.terminate()
        process.wait(timeout=30)
