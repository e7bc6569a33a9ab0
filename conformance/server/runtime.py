"""How the server's processes are tuned for steady latency: allocator, OpenMP, garbage collector.
Each setting was measured on the bundled model (numbers in the comments)."""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping

# Runtime settings for workers; the user's own environment wins.
# - glibc hands freed blocks over 128 KiB back to the OS at once, so every forward pass faults in
#   tens of MB of fresh zeroed pages again (~15,000 page faults per batch of 15 x 80 tokens
#   here). Keeping them costs memory the next request needs anyway: 165 -> 145 ms.
WORKER_ENVIRONMENT = {
    "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
}

# How long an OpenMP thread spins for more work before it sleeps. A forward pass is hundreds of
# parallel regions; a thread asleep at each must be woken (80-token input, 1 input, engine alone:
# 26-29 ms passive, 18-20 ms spinning). libgomp's default spins ~3 ms after every region, on
# cores the frontend and other processes need; 30,000 spins (~0.3 ms) keeps the speed and hands
# them back sooner. Many servers on few cores still want passive threads (a whole test run under
# xdist on 2 cores: 36 min with the default spin, 25 with ours, 15 passive). A user's
# OMP_WAIT_POLICY or GOMP_SPINCOUNT replaces ours (libgomp lets GOMP_SPINCOUNT override the
# policy, so ours must not be set beside the user's policy).
OPENMP_WAIT = {"GOMP_SPINCOUNT": "30000"}
OPENMP_WAIT_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


# A forward pass of few tokens runs on one thread, a larger one on all of them. A small pass's
# parallel regions are too short to keep a second OpenMP thread busy: between them it spins out
# (above) and sleeps, and waking it again costs from nothing to milliseconds, more so on a VM
# whose idle vCPU the host has put aside, as between requests that come apart. One thread also
# leaves the other core to the frontend and the client. Measured here (`python
# scripts/pass_threads.py`: the engine alone, idle 0.1 s before each pass; median / p90 ms, one
# thread vs two): 16 tokens 7.5 / 8.1 vs 12.7 / 17.4; 80 tokens 15.3 / 15.9 vs 15.7 / 24.5; 128
# tokens 21.0 / 21.4 vs 19.7 / 27.7; 160 tokens 25.4 / 26.3 vs 18.9 / 20.2; 15 inputs of 80
# 140 / 143 vs 89 / 98. Through the server (`bench --builtin shm`, 1 input of 80 tokens, bare
# vLLM beside it): p50 / p99 16.8 / 17.8 ms vs 18.6 / 37.9. A user's OMP_NUM_THREADS stays the
# most a pass takes.
SMALL_PASS_TOKENS = 128


def threads_for_pass(tokens: int, threads: int) -> int:
    """The threads for a forward pass over ``tokens`` (padding included), at most ``threads``."""
    return 1 if tokens <= SMALL_PASS_TOKENS else threads


def worker_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    user_set_wait = any(key in environ for key in OPENMP_WAIT_SETTINGS)
    return {**WORKER_ENVIRONMENT, **({} if user_set_wait else OPENMP_WAIT), **environ}


def freeze_long_lived_objects() -> None:
    """Call once start-up is done. Every full garbage collection walks all live objects again:
    a worker holds ~430,000 from the model and its libraries (a 170 ms stall on whichever request
    set one off), the frontend ~34,000 (3.4 ms). Frozen, they are never scanned again."""
    gc.collect()
    gc.freeze()
