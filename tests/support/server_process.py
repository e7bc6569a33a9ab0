"""Test servers as subprocesses, run from the repository (so tests.support modules import)."""

from __future__ import annotations

from pathlib import Path

from conformance.server.process import ServerProcess

REPO = Path(__file__).resolve().parents[2]


def running_server(module: str, *args: str) -> ServerProcess:
    """``with running_server(module, ...) as url:`` (``python -m module --port 0 ...``)."""
    return ServerProcess(*args, module=module, cwd=str(REPO))
