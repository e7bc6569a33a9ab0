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


def worker_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    user_set_wait = any(key in environ for key in OPENMP_WAIT_SETTINGS)
    return {**WORKER_ENVIRONMENT, **({} if user_set_wait else OPENMP_WAIT), **environ}


def freeze_long_lived_objects() -> None:
    """Call once start-up is done. Every full garbage collection walks all live objects again:
    a worker holds ~430,000 from the model and its libraries (a 170 ms stall on whichever request
    set one off), the frontend ~34,000 (3.4 ms). Frozen, they are never scanned again."""
    gc.collect()
    gc.freeze()
