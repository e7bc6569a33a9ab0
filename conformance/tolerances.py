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
  serve them) and the ``retrieval_tie`` of every tier are measured, not reasoned:
  ``scripts/measure_tiers.py`` serves all-MiniLM-L6-v2 and nomic-embed-text-v1.5 with
  llama.cpp at each precision, embeds the reference corpus, and sets each limit at the worst
  measurement over both models times 2, rounded up to 1, 2 or 5 x 10^k (docs/tiers/ keeps the
  numbers; ``--check`` reproduces them). q8_0 moves vectors by up to 1 - cosine 4.6e-3 and |Δ|
  0.013, a batch from its inputs alone by 5.6e-3. q4_K_M moves nomic's vectors as far as a wrong
  pooling would (1 - cosine median 0.059, worst 0.25): at q4_k_m reference.agreement no longer
  tells a pooling or prefix bug from rounding (docs/precision.md's tier table lists what each tier
  can no longer see). Rankings survive: no query's top 3 changed at any tier, while scores
  moved by up to 0.095, the tie within which two documents may swap. The same measurement
  confirms fp16 and bf16 (llama.cpp's f16 and bf16 files stay inside them with margins of 7 and
  more) and fp32 (bare vLLM against sentence-transformers). Quantized weights do not move the
  norm (servers normalize the pooled vector in f32), so ``norm_atol`` stays at fp32's.

The limits that do not depend on precision follow the tiers: the semantic checks' (far from
what real models give: all-MiniLM-L6-v2, sentence-transformers and bare vLLM alike, gives at
most 0.84 between two of the distinct corpus texts, at most 0.48 between a paragraph and its
first four words, and puts every paraphrase closer than the unrelated text, the smallest gap
0.13), and the size of an answer the client reads at most.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

PRECISIONS = ("fp32", "fp16", "bf16", "q8_0", "q4_k_m")


@dataclass(frozen=True)
class Tolerances:
    """Limits used by the checks; every field can be overridden from the command line."""

    vector_atol: float  # max |Δ| between two answers that must be the same vector
    norm_atol: float  # max |‖v‖₂ - 1| for normalized output
    base64_atol: float  # max |Δ| between base64-decoded and float output
    reference_atol: float  # max |Δ| from the reference model's vector
    cosine_atol: float  # max 1 - cosine similarity to the reference model's vector
    # reference.retrieval: two documents the reference scores within this of each other may
    # swap places in a query's top 3 (the largest query-document score change measured)
    retrieval_tie: float


TIERS: dict[str, Tolerances] = {
    "fp32": Tolerances(1e-5, 1e-3, 1e-5, reference_atol=1e-5, cosine_atol=1e-5, retrieval_tie=1e-6),
    "fp16": Tolerances(2e-3, 5e-3, 2e-3, reference_atol=5e-3, cosine_atol=1e-3, retrieval_tie=1e-3),
    "bf16": Tolerances(
        1.5e-2, 2e-2, 1.5e-2, reference_atol=3e-2, cosine_atol=1e-2, retrieval_tie=1e-2
    ),
    "q8_0": Tolerances(2e-2, 1e-3, 2e-2, reference_atol=5e-2, cosine_atol=1e-2, retrieval_tie=5e-2),
    "q4_k_m": Tolerances(0.1, 1e-3, 0.1, reference_atol=0.2, cosine_atol=1.0, retrieval_tie=0.2),
}


# A reference (a golden recorded from an endpoint, the bench's reference vectors) comes from a
# model that normalizes when every vector of it is this close to norm 1: the fp32 tier's limit.
REFERENCE_NORM_ATOL = TIERS["fp32"].norm_atol


def tolerances_for(precision: str, **overrides: float | None) -> Tolerances:
    """The tier's limits with any explicit overrides (None: not given) applied."""
    return replace(TIERS[precision], **{k: v for k, v in overrides.items() if v is not None})


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
