"""Timing targets: interleaved single requests (latency), and bounded load (closed-loop
concurrency, open-loop rate). Every answer is validated off the clock; a row with any invalid
answer is INVALID, and its times are never reported as latencies."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.bench.targets import Reply, Sender, Target
from conformance.bench.validate import problems
from conformance.wire import Matrix

Judge = Callable[[Matrix | None], list[str]]  # the problems of an answer to one batch
Tick = Callable[[], None]  # progress


@dataclass
class Row:
    """One target at one batch size in one mode."""

    target: str
    batch: int
    mode: str  # latency | concurrency | rate
    load: float | None = None  # clients (concurrency) or requests per second (rate)
    seconds: list[float] = field(default_factory=list)  # every timed request
    answer_bytes: list[int] = field(default_factory=list)
    invalid: int = 0
    problem: str = ""  # the first invalid answer's, in words
    wall: float = 0.0  # load modes: from the first send to the last answer

    def add(self, elapsed: float, reply: Reply, found: list[str]) -> None:
        self.seconds.append(elapsed)
        self.answer_bytes.append(len(reply.body))
        if found:
            self.invalid += 1
            self.problem = self.problem or "; ".join(found)

    @property
    def valid(self) -> bool:
        return self.invalid == 0 and bool(self.seconds)

    def timing(self) -> dict[str, float]:
        """Percentiles in milliseconds and inputs per second of every timed request."""
        ms = np.asarray(self.seconds) * 1000
        per_second = (
            self.batch * len(ms) / self.wall if self.wall else self.batch * 1000 / float(ms.mean())
        )
        return {
            "p50_ms": float(np.percentile(ms, 50)),
            "p90_ms": float(np.percentile(ms, 90)),
            "p99_ms": float(np.percentile(ms, 99)),
            "mean_ms": float(ms.mean()),
            "inputs_per_s": per_second,
        }

    def summary(self, time_invalid: bool = False) -> dict[str, Any]:
        """Percentiles in milliseconds and inputs per second; None for an INVALID row (with
        ``time_invalid``, its times go under 'invalid_timing': a payload's transfer time, not
        the latency of an answer)."""
        row: dict[str, Any] = {
            "target": self.target,
            "batch": self.batch,
            "mode": self.mode,
            "load": self.load,
            "requests": len(self.seconds),
            "invalid": self.invalid,
            "status": "VALID" if self.valid else "INVALID",
            "problem": self.problem or None,
            "bytes_per_answer": int(statistics.median(self.answer_bytes))
            if self.answer_bytes
            else 0,
        }
        if self.valid:
            return {**row, **self.timing()}
        keys = ("p50_ms", "p90_ms", "p99_ms", "mean_ms", "inputs_per_s")
        row.update(dict.fromkeys(keys))
        if time_invalid and self.seconds:
            row["invalid_timing"] = self.timing()
        return row


def judged(target: Target, reply: Reply, judge: Judge) -> list[str]:
    vectors, why = target.decode(reply)
    return [why] if why else judge(vectors)


def latency(
    targets: Sequence[Target],
    batch: list[str],
    judge: Judge,
    rounds: int,
    warmup: int,
    tick: Tick,
    pause: float = 0.0,
    settle: Callable[[], None] = lambda: None,
) -> list[Row]:
    """One request at a time, the targets interleaved (A B C A B C ...) so the machine's noise
    hits them alike; warm-up rounds are validated but not timed. Before each request, untimed,
    ``pause`` seconds pass and ``settle`` waits for a quiet machine (conformance.bench.settle):
    a target that keeps a core busy after answering (vLLM's worker polls for 1 s) would
    otherwise slow down whichever target comes next."""
    senders = [target.sender() for target in targets]
    rows = [Row(t.name, len(batch), "latency") for t in targets]
    for index in range(warmup + rounds):
        for target, send, row in zip(targets, senders, rows, strict=True):
            time.sleep(pause)
            settle()
            started = time.perf_counter()
            reply = send(batch)
            elapsed = time.perf_counter() - started
            found = judged(target, reply, judge)
            if index >= warmup:
                row.add(elapsed, reply, found)
            elif found:  # a wrong warm-up answer still makes the row INVALID
                row.invalid, row.problem = row.invalid + 1, row.problem or "; ".join(found)
            tick()
    return rows


def concurrency(
    target: Target,
    batch: list[str],
    judge: Judge,
    clients: int,
    requests: int,
    limit_s: float,
    tick: Tick,
) -> Row:
    """Closed loop: ``clients`` clients, each sending its next request when its answer is in,
    until ``requests`` were sent or ``limit_s`` passed."""
    row = Row(target.name, len(batch), "concurrency", clients)
    lock, sent = threading.Lock(), [0]
    deadline = time.perf_counter() + limit_s

    def client() -> None:
        send = target.sender()
        while True:
            with lock:
                if sent[0] >= requests or time.perf_counter() > deadline:
                    return
                sent[0] += 1
            _send_and_record(target, send, batch, judge, row, lock, tick, time.perf_counter())

    started = time.perf_counter()
    workers = [threading.Thread(target=client) for _ in range(clients)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    row.wall = time.perf_counter() - started
    return row


def rate(
    target: Target,
    batch: list[str],
    judge: Judge,
    per_second: float,
    requests: int,
    limit_s: float,
    tick: Tick,
) -> Row:
    """Open loop: requests start on a fixed schedule whether or not earlier ones are answered;
    a latency counts from the scheduled start, so a server that falls behind shows its queue."""
    row = Row(target.name, len(batch), "rate", per_second)
    count = max(1, min(requests, int(per_second * limit_s)))
    local = threading.local()
    lock = threading.Lock()

    def one(scheduled: float) -> None:
        send: Sender | None = getattr(local, "send", None)
        if send is None:
            send = local.send = target.sender()
        time.sleep(max(0.0, scheduled - time.perf_counter()))
        _send_and_record(target, send, batch, judge, row, lock, tick, scheduled)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=min(64, count)) as pool:
        for index in range(count):
            pool.submit(one, started + index / per_second)
    row.wall = time.perf_counter() - started
    return row


def _send_and_record(
    target: Target,
    send: Sender,
    batch: list[str],
    judge: Judge,
    row: Row,
    lock: threading.Lock,
    tick: Tick,
    since: float,
) -> None:
    """One request of a load, timed from ``since`` (its send, or its scheduled start)."""
    reply = send(batch)
    elapsed = time.perf_counter() - since
    found = judged(target, reply, judge)
    with lock:
        row.add(elapsed, reply, found)
    tick()


def judge_against(reference: Matrix, normalized: bool) -> Judge:
    def judge(vectors: Matrix | None) -> list[str]:
        return problems(vectors, reference, normalized=normalized)

    return judge
