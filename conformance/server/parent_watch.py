"""A local worker's watch over the frontend that started it: once the frontend is gone, however
it went (a SIGKILL included), the worker removes what the frontend left and exits with its
process group, within PARENT_CHECK_INTERVAL."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from typing import Protocol

from conformance.runtime_dir import ipc_path
from conformance.server import transports

PARENT_CHECK_INTERVAL = 0.5  # a local worker outlives its frontend by about this much


class Configured(Protocol):
    """What the watch needs of the worker once the frontend configured it."""

    prefix: str | None
    probe: str | None


class ParentWatch:
    """A local worker's watch over the frontend that started it (``--parent``). Once that
    process is gone, however it went (a SIGKILL included), we clean up after it -- its ipc
    socket file, its shared-memory segments -- and exit with our process group (vLLM's engine
    processes), within PARENT_CHECK_INTERVAL. Remote workers, started by hand, have no watch."""

    def __init__(self, parent: int, address: str, scratch: str | None = None) -> None:
        self.parent = parent
        self.scratch = scratch  # the temp folder the frontend made for its workers
        self.worker: Configured | None = None  # once the model is loaded: the prefix to sweep
        self.socket_path = ipc_path(address)
        # The frontend bound it before starting us: a file put there later is not its own.
        self.socket_file = _file_identity(self.socket_path)

    def start(self) -> None:
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        while os.getppid() == self.parent:  # reparented (to init or a subreaper): it is gone
            time.sleep(PARENT_CHECK_INTERVAL)
        with contextlib.suppress(OSError):  # a closed stderr must not keep us alive
            print(f"worker: frontend {self.parent} is gone; exiting", file=sys.stderr, flush=True)
        self.clean_up()
        _exit_with_group()

    def clean_up(self) -> None:
        path = self.socket_path
        if self.socket_file is not None and _file_identity(path) == self.socket_file:
            assert path is not None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        worker = self.worker
        if worker is not None and worker.prefix:
            transports.sweep(worker.prefix)
        if worker is not None and worker.probe:
            transports.discard_segment(worker.probe)
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _file_identity(path: str | None) -> tuple[int, int] | None:
    if path is None:
        return None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _exit_with_group() -> None:
    if os.getpgrp() == os.getpid():  # our own group (as pool.py starts us): take it along
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(0)
