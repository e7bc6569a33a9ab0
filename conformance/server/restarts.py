"""When a local worker that died is started again, and when it is given up.

A worker that keeps dying (a model folder gone from under it, a crash on every start) must not
be started again forever: each restart within RESTART_WINDOW waits twice as long as the one
before, and one more than ``max_restarts`` there gives the worker up."""

from __future__ import annotations

START_FAILED = 3  # the exit code of a worker whose model did not load (it says why first)
MAX_RESTARTS = 5
RESTART_WINDOW = 60.0
FIRST_PAUSE, LONGEST_PAUSE = 1.0, 8.0  # seconds before the 2nd restart in the window, at most


def within_window(restarts: list[float], now: float) -> list[float]:
    """The restarts (when each was due, monotonic seconds) that count ``now``."""
    return [due for due in restarts if now - due < RESTART_WINDOW]


def next_restart(recent: list[float], max_restarts: int) -> float | None:
    """The pause before restarting a worker after ``recent`` restarts within the window, or
    None to give it up. The first restart in a window is at once."""
    if len(recent) >= max_restarts:
        return None
    return min(LONGEST_PAUSE, FIRST_PAUSE * 2 ** (len(recent) - 1)) if recent else 0.0
