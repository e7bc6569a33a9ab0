"""How long a client may wait before its retries, over the whole run.

A 429 or 503 is asked again after a backoff (0.5, 1, then 2 s when the server names no wait).
Per request, that is right for a server briefly overloaded; but a server that answers a few
503s after every rejected request (a bug the suite provokes over a hundred times, in the error
cases and the fuzzer) then costs each of them 3.5 s: a run of 22 s took 8 minutes. So the waits
the client chooses itself come out of one budget per client, a token bucket of seconds: it
holds ALLOWANCE seconds (one request's whole backoff, or a burst of first retries) and earns
REFILL seconds per second of the run, so waiting adds at most about a third to a long run (that
run: 28 s). Once it is spent, retries still happen, after SHORT_WAIT only: the answer judged is
still the one after RETRIES retries, so a 503 that stays is still the answer (never a pass),
only sooner; a server that is still overloaded then fails tests rather than slowing the run.

Not budgeted: a wait the server names (Retry-After), honoured in full (up to
http.LONGEST_WAIT) but charged: a rate limiter paces the run, and asking sooner gets only more
429s, which would turn a slow run of a rate-limited endpoint into a failed one. Waits of several
threads at once (the concurrency tests) are charged for the wall time they take together.

Rather than gRPC's retry throttling (no retry while failures outnumber successes), this bounds
what such a bug costs, the run's time, and keeps every retry: the number of retries, counted
and reported, and the answer a retrying client ends with stay what they were.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

ALLOWANCE = 4.0  # seconds of waiting at hand: 0.5 + 1 + 2 s, one request's whole backoff
REFILL = 0.25  # seconds of waiting earned per second of the run
SHORT_WAIT = 0.01  # seconds before a retry once the budget is spent


class RetryBudget:
    """The waiting a client may still do before retries; safe to share between threads."""

    def __init__(
        self,
        allowance: float = ALLOWANCE,
        refill: float = REFILL,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.allowance = allowance
        self.refill = refill
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._level = allowance  # seconds at hand
        self._filled = clock()  # when the level was last brought up to date
        self._charged_until = self._filled  # the end of the last wait charged

    def grant(self, wanted: float, *, named: bool = False) -> float:
        """Seconds to wait before a retry that wants ``wanted``: all of it while the budget
        lasts (or when the server ``named`` it, with Retry-After), else what is left of the
        budget, at least SHORT_WAIT (never more than wanted)."""
        with self._lock:
            now = self._clock()
            earned = (now - self._filled) * self.refill
            self._level, self._filled = min(self.allowance, self._level + earned), now
            granted = wanted if named else min(wanted, max(self._level, SHORT_WAIT))
            # Charged only for the part of [now, now + granted] no earlier wait covers.
            ends = now + granted
            charged = max(0.0, ends - max(now, self._charged_until))
            self._charged_until = max(self._charged_until, ends)
            self._level = max(0.0, self._level - charged)
            return granted

    def wait(self, wanted: float, *, named: bool = False) -> float:
        """Wait what ``grant`` grants (outside the lock: other threads wait alongside); the
        seconds waited."""
        granted = self.grant(wanted, named=named)
        self._sleep(granted)
        return granted
