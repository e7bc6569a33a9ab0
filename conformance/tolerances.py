"""Precision tiers: the default limits a server is judged by, one set per numeric precision.

Why these numbers:
- fp32 ``vector_atol`` 1e-5: a correct fp32 server differs between a text embedded alone and in a
  padded batch only by BLAS reduction order, measured here at ~2e-7 (all-MiniLM-L6-v2, CPU).
  A real padding or cross-talk bug moves elements by 1e-2 and more.
- ``norm_atol`` 1e-3 for fp32 is llama.cpp's and vLLM's bar for "normalized"; half precision
  rounds each element to ~1e-3 relative, so its norm can drift further.
- ``base64_atol`` 0 for fp32: base64 carries the same float32 bits the JSON floats do, so any
  difference is a transport bug. Lower tiers allow servers that print fewer JSON digits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

PRECISIONS = ("fp32", "fp16", "bf16")


@dataclass(frozen=True)
class Tolerances:
    """Limits used by the checks; every field can be overridden from the command line."""

    vector_atol: float  # max |Δ| between two answers that must be the same vector
    norm_atol: float  # max |‖v‖₂ - 1| for normalized output
    base64_atol: float  # max |Δ| between base64-decoded and float output


TIERS: dict[str, Tolerances] = {
    "fp32": Tolerances(vector_atol=1e-5, norm_atol=1e-3, base64_atol=0.0),
    "fp16": Tolerances(vector_atol=2e-3, norm_atol=5e-3, base64_atol=1e-4),
    "bf16": Tolerances(vector_atol=1.5e-2, norm_atol=2e-2, base64_atol=1e-3),
}


def tolerances_for(
    precision: str,
    *,
    vector_atol: float | None = None,
    norm_atol: float | None = None,
    base64_atol: float | None = None,
) -> Tolerances:
    """The tier's limits with any explicit overrides applied."""
    tier = TIERS[precision]
    overrides = {
        name: value
        for name, value in (
            ("vector_atol", vector_atol),
            ("norm_atol", norm_atol),
            ("base64_atol", base64_atol),
        )
        if value is not None
    }
    return replace(tier, **overrides)
