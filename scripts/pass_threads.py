"""One thread or two for a forward pass, by its size (issue 40's evidence for
conformance.server.runtime.SMALL_PASS_TOKENS).

The bundled server's engine, alone in this process under the workers' runtime settings, times
each pass on one thread and on two, interleaved, each after an idle wait: requests that come
apart meet a machine that has been idle, and a second OpenMP thread that has gone to sleep.
Prints the median and p90 per pass size; `--idle 0` shows the same passes back to back.

    python scripts/pass_threads.py [--idle 0.1] [--rounds 25]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from conformance.server import runtime

SIZES = ((1, 16), (1, 80), (1, 128), (1, 160), (1, 256), (2, 80), (15, 80))  # inputs, tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=float, default=0.1, help="seconds idle before each pass")
    parser.add_argument("--rounds", type=int, default=25, help="passes per size and thread count")
    args = parser.parse_args()
    if os.environ.get("GOMP_SPINCOUNT") is None and "OMP_WAIT_POLICY" not in os.environ:
        # glibc and libgomp read their settings at start: run again with the workers'
        os.execve(sys.executable, [sys.executable, *sys.argv], runtime.worker_environment())

    from conformance.bench.main import texts
    from conformance.server.engines.sentence_transformers import SentenceTransformersEngine

    engine = SentenceTransformersEngine(None, None)
    runtime.SMALL_PASS_TOKENS = 0  # every pass on the threads set here, not the engine's choice
    engine.embed_texts(texts(4, 80))  # warm up
    print(f"pass (inputs x tokens), idle {args.idle} s before each: median / p90 ms")
    print("                 1 thread        2 threads")
    for inputs, tokens in SIZES:
        batch = texts(inputs, tokens)
        times: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.rounds):
            for threads, timed in times.items():
                engine._threads = threads
                time.sleep(args.idle)
                started = time.perf_counter()
                engine.embed_texts(batch)
                timed.append((time.perf_counter() - started) * 1000)
        cells = [
            f"{statistics.median(t):6.1f} / {sorted(t)[int(0.9 * len(t))]:5.1f}"
            for t in times.values()
        ]
        print(f"  {inputs:2d} x {tokens:3d}    {cells[0]}    {cells[1]}")


if __name__ == "__main__":
    main()
