"""A run ended by SIGTERM (a CI job cancelled, ``timeout``, the matrix build stopping its peer's
suite) ends as one interrupted by Ctrl-C: pytest raises KeyboardInterrupt, still finishes the
session and unconfigures the plugin, so the run stops the server it started and removes its
runtime files. By default SIGTERM ends Python at once, and all of that would be left behind."""

from __future__ import annotations

import signal
import threading
from types import FrameType


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"ended by signal {signal.Signals(signum).name}")


def end_like_ctrl_c() -> bool:
    """Take SIGTERM as Ctrl-C; False (left alone) when someone else already handles it or this
    is not the main thread (only the main thread may set a handler)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False
    signal.signal(signal.SIGTERM, _interrupt)
    return True


def default_again() -> None:
    """SIGTERM ends the process at once again (our handler only; another one is kept)."""
    if signal.getsignal(signal.SIGTERM) is _interrupt:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
