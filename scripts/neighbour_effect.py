"""What a neighbour that has just answered does to the request timed next (issue 40's evidence).

The bundled server on shared memory answers batch-1 requests, each timed twice per round: on a
quiet machine (after waiting for the CPU to settle), and right after a request to a neighbouring
server (bare vLLM) has been answered. After each neighbour answer the machine's CPU use is also
sampled in 100 ms bins, with nothing else running: what the neighbour keeps doing once it has
answered. Prints medians per case and the CPU profile.

    python scripts/neighbour_effect.py --neighbour http://127.0.0.1:8000 [--rounds 30]
"""

from __future__ import annotations

import argparse
import statistics
import time

import requests

from conformance.bench.main import texts
from conformance.bench.settle import Settle, busy_cores
from conformance.server.process import ServerProcess

MODEL = "all-MiniLM-L6-v2"
BIN_S = 0.1
BINS = 15


def post(session: requests.Session, url: str, text: str) -> float:
    """One batch-1 request; its wall time in ms, once answered right (a 200 with one vector)."""
    started = time.perf_counter()
    response = session.post(
        f"{url}/v1/embeddings", json={"model": MODEL, "input": [text]}, timeout=60
    )
    elapsed = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    assert len(response.json()["data"]) == 1
    return elapsed


def percentile(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--neighbour", required=True, help="base URL of the neighbouring server")
    parser.add_argument("--rounds", type=int, default=30, help="rounds (default 30)")
    parser.add_argument("--tokens", type=int, default=80, help="tokens an input (default 80)")
    args = parser.parse_args()
    text = texts(1, args.tokens)[0]
    settle = Settle(cores=0.5, limit_s=5.0)
    quiet: list[float] = []
    after: list[float] = []
    profile: list[list[float]] = []
    with ServerProcess("--transport", "shm") as shm, requests.Session() as session:
        for _ in range(3):  # warm both up
            post(session, shm, text)
            post(session, args.neighbour, text)
        for _ in range(args.rounds):
            settle()
            quiet.append(post(session, shm, text))
            settle()
            post(session, args.neighbour, text)
            profile.append([busy_cores(BIN_S) or 0.0 for _ in range(BINS)])
            settle()
            post(session, args.neighbour, text)
            after.append(post(session, shm, text))
    for name, values in (("quiet machine", quiet), ("right after the neighbour", after)):
        print(
            f"shm batch 1, {name}: p50 {statistics.median(values):.1f} ms, "
            f"p90 {percentile(values, 0.9):.1f} ms, p99 {percentile(values, 0.99):.1f} ms"
        )
    print("the machine's CPU use after the neighbour answered (median of rounds, cores):")
    for position in range(BINS):
        cores = statistics.median(row[position] for row in profile)
        start, bar = position * BIN_S * 1000, "#" * round(cores * 20)
        print(f"  {start:5.0f}-{start + BIN_S * 1000:4.0f} ms  {cores:4.2f}  {bar}")


if __name__ == "__main__":
    main()
