"""A quiet machine before each timed request.

Targets benched side by side share the machine's cores. One that keeps a core busy after it has
answered (bare vLLM's engine polls for about a second) slows down whichever target is timed
next: a forward pass whose OpenMP threads lose a core to another process waits at every one of
its parallel regions for the thread that lost it. So before each timed request the bench waits
until the other processes' CPU use, read from /proc/stat, is below a threshold for one sampling
window, or until a time limit passes (the request is then timed anyway, and counted as timed on
a busy machine, so that a run on a machine that never goes quiet still ends and says so).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROC_STAT = Path("/proc/stat")
WINDOW_S = 0.05  # one sample; /proc/stat counts in 10 ms ticks per core
DEFAULT_CORES = 0.5  # a process spinning on one core reads as ~1; an idle machine as ~0.05
DEFAULT_LIMIT_S = 3.0


def _cpu_times(stat: Path) -> list[int] | None:
    """The first line of /proc/stat, every core summed, in ticks: user nice system idle iowait
    irq softirq steal. None where it cannot be read."""
    try:
        fields = stat.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    return [int(v) for v in fields[1:9]]


def cpu_ticks(stat: Path = PROC_STAT) -> tuple[int, int] | None:
    """(busy, all) ticks of every core since boot; None where /proc/stat cannot be read.
    Steal (the hypervisor's) counts as neither: no waiting here makes it go away."""
    times = _cpu_times(stat)
    if times is None:
        return None
    user, nice, system, idle, iowait, irq, softirq, _ = times
    busy = user + nice + system + irq + softirq
    return busy, busy + idle + iowait


def steal_ticks(stat: Path = PROC_STAT) -> tuple[int, int] | None:
    """(stolen, all) ticks of every core since boot, steal included in all: the time the
    hypervisor gave this machine's cores to others. None where /proc/stat cannot be read."""
    times = _cpu_times(stat)
    return None if times is None else (times[7], sum(times))


def steal_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The share of CPU time stolen between two readings of steal_ticks."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def busy_cores(window: float = WINDOW_S, stat: Path = PROC_STAT) -> float | None:
    """How many cores' worth of CPU the machine used over the next ``window`` seconds."""
    before = cpu_ticks(stat)
    time.sleep(window)
    after = cpu_ticks(stat)
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1]) * (os.cpu_count() or 1)


@dataclass
class Settle:
    """Call before a timed request: returns once the machine is quiet (or the limit passed).
    ``cores`` 0 turns the wait off."""

    cores: float = DEFAULT_CORES
    limit_s: float = DEFAULT_LIMIT_S
    sample: Callable[[], float | None] = busy_cores  # cores busy over one window
    waits: list[float] = field(default_factory=list)
    busy: int = 0  # requests timed on a machine that did not go quiet within the limit
    unreadable: bool = False  # no /proc/stat here: nothing was waited for
    # Steal over the run: a wait cannot avoid it, and it slows every target alike.
    steal_from: tuple[int, int] | None = field(default_factory=steal_ticks)

    def __call__(self) -> None:
        if self.cores <= 0 or self.unreadable:
            return
        started = time.perf_counter()
        while True:
            load = self.sample()
            waited = time.perf_counter() - started
            if load is None:
                self.unreadable = True
                return
            if load < self.cores or waited >= self.limit_s:
                self.busy += load >= self.cores
                self.waits.append(waited)
                return

    def summary(self) -> dict[str, Any]:
        waits_ms = [w * 1000 for w in self.waits] or [0.0]
        return {
            "cores": self.cores,
            "limit_s": self.limit_s,
            "requests": len(self.waits),
            "median_wait_ms": statistics.median(waits_ms),
            "max_wait_ms": max(waits_ms),
            "timed_busy": self.busy,
            "unavailable": self.unreadable,
            "steal_share": steal_share(self.steal_from, steal_ticks()),
        }


def describe(summary: Mapping[str, Any]) -> str:
    """Lines for the bench's output: what was waited for, how it went, and the steal."""
    if summary["cores"] <= 0:
        line = "settle: off (--settle 0): a busy target may slow down the one timed next"
    elif summary["unavailable"]:
        line = "settle: /proc/stat cannot be read here, nothing was waited for"
    else:
        line = (
            f"settle: before each request, a wait (median {summary['median_wait_ms']:.0f} ms, "
            f"longest {summary['max_wait_ms']:.0f} ms) for the machine's CPU use to fall below "
            f"{summary['cores']:g} cores; {summary['timed_busy']} of {summary['requests']} "
            f"requests sent with it still busy after {summary['limit_s']:g} s"
        )
    stolen = summary.get("steal_share")
    if stolen is None:
        return line
    return (
        f"{line}\nsteal: the hypervisor took {stolen:.1%} of this machine's CPU time during the "
        "run (time no wait gets back: it slows every target alike and widens the tails)"
    )
