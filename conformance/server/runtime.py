"""How the server's processes are tuned for steady latency: allocator, OpenMP, garbage collector.
Each setting was measured on the bundled model (numbers in the comments)."""

from __future__ import annotations

import gc
import os

# Runtime settings for workers; the user's own environment wins.
# - glibc hands freed blocks over 128 KiB back to the OS at once, so every forward pass faults in
#   tens of MB of fresh zeroed pages again (~15,000 page faults per batch of 15 x 80 tokens
#   here). Keeping them costs memory the next request needs anyway: 165 -> 145 ms.
# - OpenMP threads busy-wait after each parallel region by default, on the cores the frontend
#   (and other workers) need next; passive waiting hands them back: a 1-input request 14.7 ->
#   10.5 ms next to another torch process on 2 cores; a whole test run (servers side by side
#   under xdist) took 36 min with spinning workers, 19 min without. On cores of its own a
#   worker loses by it: each of a forward pass's hundreds of regions must wake its threads
#   (80-token input, 1 input: 26.4 ms passive, 16.9 ms with libgomp's default spin; bench, 4
#   servers interleaved). There, start the server with GOMP_SPINCOUNT=300000, which libgomp
#   lets override the policy.
WORKER_ENVIRONMENT = {
    "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
    "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
    "OMP_WAIT_POLICY": "PASSIVE",
}


def worker_environment() -> dict[str, str]:
    return {**WORKER_ENVIRONMENT, **os.environ}


def freeze_long_lived_objects() -> None:
    """Call once start-up is done. Every full garbage collection walks all live objects again:
    a worker holds ~430,000 from the model and its libraries (a 170 ms stall on whichever request
    set one off), the frontend ~34,000 (3.4 ms). Frozen, they are never scanned again."""
    gc.collect()
    gc.freeze()
