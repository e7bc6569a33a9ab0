"""Precision tiers: the default limits a server is judged by, one set per numeric precision.

Why these numbers:
- fp32 ``vector_atol`` 1e-5: a correct fp32 server differs between a text embedded alone and in a
  padded batch only by BLAS reduction order, measured here at ~2e-7 (all-MiniLM-L6-v2, CPU).
  A real padding or cross-talk bug moves elements by 1e-2 and more. Set for unit vectors: two
  answers of a server that does not normalize are compared in units of their norm
  (checks/compare.row_deviations), so that its norm is judged once, by normalization.unit-norm.
- ``norm_atol`` 1e-3 for fp32 is llama.cpp's and vLLM's bar for "normalized"; half precision
  rounds each element to ~1e-3 relative, so its norm can drift further.
- ``base64_atol`` equals ``vector_atol``: base64 carries the same float32 bits the JSON floats
  do, but the suite's float and base64 answers come from two requests, and a correct server
  may compute a batch a little differently each time (bare vLLM 0.32 on the CPU: up to 6.6e-7
  between two identical float requests for minilm-cls-dense-256, while its float and base64
  answers to one computation are bit-identical). A transport bug (big-endian bytes, a float16
  round trip, another row) moves elements by far more.
- ``reference_atol`` / ``cosine_atol`` judge agreement with a reference model. fp32: bare vLLM
  and sentence-transformers differ by at most 3.4e-7 (1 - cosine < 1e-7) on the whole reference
  corpus, so 1e-5 leaves 30x headroom, while rounding a vector to float16 already moves
  elements by ~1e-4. Half-precision servers compute the whole model in 16 bits: 5e-3 / 1e-3
  (fp16) and 3e-2 / 1e-2 (bf16, vLLM's own bar for half precision) still fail a wrong pooling
  or a truncated input, whose cosine drops below 0.95.

- The quantized tiers (``q8_0``, ``q4_k_m``: GGUF weights as llama.cpp, Ollama and LM Studio
  serve them), the ``kernel`` tier and the ``retrieval_tie`` of every tier are measured, not
  reasoned: ``scripts/measure_tiers.py`` serves all-MiniLM-L6-v2 and nomic-embed-text-v1.5 with
  llama.cpp at each precision, embeds the reference corpus, and sets each limit at the worst
  measurement times 2, rounded up to 1, 2 or 5 x 10^k (docs/tiers/ keeps the numbers;
  ``--check`` reproduces them): for each model alone (MODEL_TIERS, chosen by the reference's
  model) and over both (TIERS, for any other model). ``cosine_median_atol`` holds the corpus's
  median 1 - cosine, which a systematic error moves (positions shifted, a prefix) while the
  weights' worst input sits far out; ``cosine_atol`` never passes 0.5 (nomic's q4_K_M worst,
  0.25, times 2 is just past it), so no tier accepts a vector at right angles to the reference.
  q4_K_M moves nomic's vectors as far as some bugs would (median 0.059, worst 0.25), MiniLM's a
  seventh of that (0.0087, 0.035): only MiniLM's own limits see a position or truncation bug
  there (docs/tiers/faults.md). ``kernel`` judges a quantized server against the golden of the
  weights it serves (``golden record --from gguf:FILE``): what is left is its kernels'
  arithmetic (docs/tiers/kernel.md). Rankings survive: no query's top 3 changed at any tier.
  The same measurement confirms fp16 and bf16 (llama.cpp's f16 and bf16 files stay inside them
  with margins of 7 and more) and fp32 (bare vLLM against sentence-transformers); their
  median limit is their worst's. Quantized weights do not move the norm (servers normalize
  the pooled vector in f32), so ``norm_atol`` stays at fp32's. ``vector_atol`` is a server's
  batch noise, what its kernels do, not its weights' distance from the reference.

The limits that do not depend on precision follow the tiers: the semantic checks' (far from
what real models give: all-MiniLM-L6-v2, sentence-transformers and bare vLLM alike, gives at
most 0.84 between two of the distinct corpus texts, at most 0.48 between a paragraph and its
first four words, and puts every paraphrase closer than the unrelated text, the smallest gap
0.13), and the size of an answer the client reads at most.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

PRECISIONS = ("fp32", "fp16", "bf16", "q8_0", "q4_k_m", "kernel")
# the tier of a quantized server judged against the golden of the weights it serves; the others
# judge the weights' rounding against the model's fp32 golden
KERNEL = "kernel"


@dataclass(frozen=True)
class Tolerances:
    """Limits used by the checks; every field can be overridden from the command line."""

    vector_atol: float  # max |Δ| between two answers that must be the same vector
    norm_atol: float  # max |‖v‖₂ - 1| for normalized output
    base64_atol: float  # max |Δ| between base64-decoded and float output
    reference_atol: float  # max |Δ| from the reference model's vector
    cosine_atol: float  # max 1 - cosine similarity to the reference model's vector
    # max median of 1 - cosine over a set of inputs (agreement.MEDIAN_INPUTS or more): a
    # systematic error moves every input, while one hard input may sit near cosine_atol
    cosine_median_atol: float
    # reference.retrieval: two documents the reference scores within this of each other may
    # swap places in a query's top 3 (the largest query-document score change measured)
    retrieval_tie: float


def _tier(
    vector: float, norm: float, reference: float, cosine: float, median: float, tie: float
) -> Tolerances:
    """A tier as docs/precision.md's table lists it (base64 parity at the vector limit)."""
    return Tolerances(vector, norm, vector, reference, cosine, median, tie)


# The limits for a model the project has not measured: at the quantized tiers and the kernel
# tier the widest measured over all-MiniLM-L6-v2 and nomic-embed-text-v1.5 (docs/tiers).
TIERS: dict[str, Tolerances] = {
    "fp32": _tier(1e-5, 1e-3, 1e-5, 1e-5, 1e-5, 1e-6),
    "fp16": _tier(2e-3, 5e-3, 5e-3, 1e-3, 1e-3, 1e-3),
    "bf16": _tier(1.5e-2, 2e-2, 3e-2, 1e-2, 1e-2, 1e-2),
    "q8_0": _tier(2e-2, 1e-3, 5e-2, 1e-2, 5e-3, 5e-2),
    "q4_k_m": _tier(0.1, 1e-3, 0.2, 0.5, 0.2, 0.2),
    "kernel": _tier(0.1, 1e-3, 0.1, 0.2, 2e-2, 0.1),
}

# The derived tiers of each model the project measured, chosen by the reference's model: a
# server of all-MiniLM-L6-v2's q4_K_M weights is judged by what those weights move (1 - cosine
# at most 0.035, median 0.0087), not by nomic's (0.25, median 0.059), which would let a
# systematic error of MiniLM's size pass (docs/tiers/faults.md).
MODEL_TIERS: dict[str, dict[str, Tolerances]] = {
    "all-MiniLM-L6-v2": {
        "q8_0": _tier(1e-2, 1e-3, 5e-2, 5e-3, 1e-3, 2e-2),
        "q4_k_m": _tier(2e-2, 1e-3, 0.1, 0.1, 2e-2, 0.1),
        "kernel": _tier(2e-2, 1e-3, 5e-2, 5e-3, 1e-3, 2e-2),
    },
    "nomic-embed-text-v1.5": {
        "q8_0": _tier(2e-2, 1e-3, 5e-2, 1e-2, 5e-3, 5e-2),
        "q4_k_m": _tier(0.1, 1e-3, 0.2, 0.5, 0.2, 0.2),
        "kernel": _tier(0.1, 1e-3, 0.1, 0.2, 2e-2, 0.1),
    },
}


def tier_of(precision: str, model: str | None = None) -> Tolerances:
    """The tier's limits for ``model`` (any case, with or without an organisation:
    ``sentence-transformers/all-MiniLM-L6-v2``) when the project measured that model at that
    tier, else the tier's own, for any model."""
    name = (model or "").rpartition("/")[2].lower()
    measured = {m.lower(): tiers for m, tiers in MODEL_TIERS.items()}.get(name, {})
    return measured.get(precision, TIERS[precision])


# A reference (a golden recorded from an endpoint, the bench's reference vectors) comes from a
# model that normalizes when every vector of it is this close to norm 1: the fp32 tier's limit.
REFERENCE_NORM_ATOL = TIERS["fp32"].norm_atol


def tolerances_for(
    precision: str, model: str | None = None, **overrides: float | None
) -> Tolerances:
    """The tier's limits (``model``'s own where measured: tier_of) with any explicit
    overrides (None: not given) applied."""
    given = {k: v for k, v in overrides.items() if v is not None}
    return replace(tier_of(precision, model), **given)


# Semantic checks (checks/semantics.py): no reference needed, so wide margins.
SAME_VECTOR = 0.999  # cosine at which two different texts count as one vector
PREFIX_COSINE = 0.95  # a paragraph at least this close to its first words was cut short
PARAPHRASE_RATE = 0.9  # of easy triplets whose paraphrase is closer than the unrelated text

# batch.large sends this many inputs in one request, past the chunk sizes servers split batches
# into; a declared max_batch below it promises nothing about batch.large.
LARGE_BATCH = 128

# Request bodies the property-based fuzzer generates by default (--fuzz-examples), and the
# fewest a certificate may rest on.
FUZZ_EXAMPLES = 100

# Request shapes (and bursts) generated beyond the fixed ones by default (--shape-examples): a
# few seconds against the bundled server; and the seed that draws them (--shape-seed).
SHAPE_EXAMPLES = 6
SHAPE_SEED = 20261204

# The largest answer read (--max-response-mb): a per-token answer to a large batch runs to tens
# of MB, so it is read and judged; a server streaming without end is cut off.
MAX_RESPONSE_MB = 64
