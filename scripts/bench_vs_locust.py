"""The same closed-loop load from the local bench and from Locust (a master and two workers),
alternated on one bundled server, every answer judged by both; then the validator's CPU cost
per answer. The figures docs/bench.md quotes come from this script.

    python scripts/bench_vs_locust.py [--rounds 3] [--clients 4] [--batch 15] [--requests 200]
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from conformance.bench import measure
from conformance.bench.targets import Reply, decode_reply
from conformance.matrix.processes import free_ports
from conformance.server.process import ServerProcess

LOCUSTFILE = Path(__file__).parents[1] / "conformance" / "bench" / "locustfile.py"


def local_bench(url: str, args: argparse.Namespace, out: Path) -> dict[str, float]:
    command = [sys.executable, "-m", "conformance.cli", "bench", "--endpoint", url, "--quiet"]
    command += ["--batch", str(args.batch), "--rounds", "1", "--warmup", "1"]
    command += ["--concurrency", str(args.clients), "--requests", str(args.requests)]
    subprocess.run([*command, "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return load_row(out)


def locust(url: str, args: argparse.Namespace, out: Path) -> dict[str, float]:
    (port,) = free_ports(1)
    common = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE)]
    master = [
        *common,
        *("--master", "--headless", "--expect-workers", "2", "--master-bind-host", "127.0.0.1"),
        *("--master-bind-port", str(port), "--host", url, "--run-time", "300s"),
        *("-u", str(args.clients), "-r", str(args.clients), "--ec-batch", str(args.batch)),
        *("--ec-requests", str(args.requests), "--ec-out", str(out)),
    ]
    worker = [*common, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes = [subprocess.Popen(master, **quiet)]  # type: ignore[call-overload]
    processes += [subprocess.Popen(worker, **quiet) for _ in range(2)]  # type: ignore[call-overload]
    try:
        if processes[0].wait(timeout=600) != 0:
            raise SystemExit("the Locust run found invalid answers")
        for process in processes[1:]:
            process.wait(timeout=30)
    finally:
        for process in processes:
            process.kill()
            process.wait()
    return load_row(out)


def load_row(out: Path) -> dict[str, float]:
    rows = json.loads((out / "bench.json").read_text())["rows"]
    (row,) = [r for r in rows if r["mode"] == "concurrency"]
    assert row["status"] == "VALID", row
    return {"inputs_per_s": row["inputs_per_s"], "p50_ms": row["p50_ms"]}


def validator_cost_us(size: int, repeat: int = 300) -> float:
    """CPU microseconds to decode one base64 answer of ``size`` vectors and judge it."""
    rng = np.random.default_rng(0)
    reference = rng.standard_normal((size, 384))
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": base64.b64encode(row.astype("<f4")).decode(),
        }
        for i, row in enumerate(reference)
    ]
    usage = {"prompt_tokens": size, "total_tokens": size}
    body = json.dumps({"object": "list", "model": "m", "data": data, "usage": usage}).encode()
    judge = measure.judge_against(reference, True)
    samples = []
    for _ in range(7):
        started = time.process_time()
        for _ in range(repeat):
            vectors, why = decode_reply(Reply(200, body))
            assert not why and not judge(vectors)
        samples.append((time.process_time() - started) / repeat * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="bench, Locust pairs (default 3)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients (default 4)")
    parser.add_argument("--batch", type=int, default=15, help="inputs per request (default 15)")
    parser.add_argument("--requests", type=int, default=200, help="per run (default 200)")
    args = parser.parse_args()
    figures: dict[str, list[dict[str, float]]] = {"bench": [], "locust": []}
    with ServerProcess() as url, tempfile.TemporaryDirectory() as scratch:
        for number in range(args.rounds):  # alternated: the machine's noise hits both alike
            figures["bench"].append(local_bench(url, args, Path(scratch) / f"bench-{number}"))
            figures["locust"].append(locust(url, args, Path(scratch) / f"locust-{number}"))
    for name, runs in figures.items():
        rates = ", ".join(f"{run['inputs_per_s']:.1f}" for run in runs)
        p50s = ", ".join(f"{run['p50_ms']:.0f}" for run in runs)
        print(f"{name:>7}: inputs/s {rates}; p50 ms {p50s}")
    bench = statistics.median(run["inputs_per_s"] for run in figures["bench"])
    loaded = statistics.median(run["inputs_per_s"] for run in figures["locust"])
    print(f"median inputs/s: bench {bench:.1f}, Locust {loaded:.1f}, ratio {loaded / bench:.2f}")
    for size in (1, 15, 64):
        print(f"validator, batch {size}: {validator_cost_us(size):.0f} us CPU per answer")


if __name__ == "__main__":
    main()
