"""Work done once in a test run, however many xdist workers need its result: the first to ask
does it in a folder every worker sees, the others wait for it and read what it left there."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest


def once(factory: pytest.TempPathFactory, name: str, work: Callable[[Path], None]) -> Path:
    """The folder ``name`` in which ``work(folder)`` has run, once for the whole test run.
    Work that raises is left for the next worker that asks to try again."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers' common
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            folder.mkdir(exist_ok=True)
            work(folder)
            done.touch()
    return folder
