"""The ``semantics.*`` requirements, which need no reference: what any embedding model worth
serving does with meaning.

They fail a server that returns well-formed, normalized, stable and meaningless vectors (one
vector for every input, rows shuffled, inputs cut to a few tokens) when no reference applies.
The limits are far from what real models give, so a correct server passes with a wide margin:
all-MiniLM-L6-v2 (sentence-transformers and bare vLLM alike) gives at most 0.84 between two of
the distinct corpus texts, at most 0.48 between a paragraph and its first four words, and puts
every paraphrase closer than the unrelated text (the smallest gap 0.13).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conformance.checks.agreement import cosine_distances
from conformance.checks.result import CheckResult, at_most
from conformance.wire import Matrix

SAME_VECTOR = 0.999  # cosine at which two different texts count as one vector
PREFIX_COSINE = 0.95  # a paragraph at least this close to its first words was cut short
PARAPHRASE_RATE = 0.9  # of easy triplets whose paraphrase is closer than the unrelated text
WORST_LISTED = 3


def cosine_matrix(vectors: Matrix) -> Matrix:
    """Pairwise cosine similarities (a zero vector is at cosine 0 with everything)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    return np.asarray(unit @ unit.T, dtype=np.float64)


def distinct_texts(vectors: Matrix, ids: Sequence[str]) -> CheckResult:
    """No two different texts get the same vector: the largest cosine between two of them
    stays below SAME_VECTOR. Catches one vector for every input and answers that ignore the
    text (a cache keyed wrongly, a constant fallback)."""
    similarities = cosine_matrix(vectors)
    np.fill_diagonal(similarities, -1.0)
    i, j = (int(k) for k in np.unravel_index(int(np.argmax(similarities)), similarities.shape))
    worst = float(similarities[i, j])
    detail = f"largest cosine between two of {len(ids)} different texts: {ids[i]} ~ {ids[j]}"
    return at_most(worst, SAME_VECTOR, detail, i)


def not_a_prefix(full: Matrix, prefixes: Matrix, ids: Sequence[str]) -> CheckResult:
    """A paragraph does not embed like its own first few words: catches inputs cut to a few
    tokens (a context length misconfigured, a tokenizer that stops early)."""
    similarity = 1.0 - cosine_distances(full, prefixes)
    worst = int(np.argmax(similarity))
    detail = f"cosine of a paragraph and its first words, worst {ids[worst]}"
    return at_most(float(similarity[worst]), PREFIX_COSINE, detail, worst)


def paraphrase_closer(
    anchors: Matrix, paraphrases: Matrix, unrelated: Matrix, ids: Sequence[str]
) -> CheckResult:
    """On easy triplets, the paraphrase is closer to the anchor than the unrelated text for at
    least PARAPHRASE_RATE of them. Catches meaningless vectors and rows handed to the wrong
    inputs; the rate, not every triplet, so a weaker model is not failed for one hard case."""
    gaps = cosine_distances(anchors, unrelated) - cosine_distances(anchors, paraphrases)
    rate = float((gaps > 0).mean())
    order = np.argsort(gaps)[:WORST_LISTED]
    worst = ", ".join(f"{ids[k]} {gaps[k]:+.3g}" for k in order)
    detail = (
        f"{int((gaps > 0).sum())} of {len(ids)} triplets with the paraphrase closer; "
        f"smallest gaps (cosine to paraphrase - to unrelated): {worst}"
    )
    passed = rate >= PARAPHRASE_RATE
    return CheckResult(
        passed, rate, f">= {PARAPHRASE_RATE:g}", rate - PARAPHRASE_RATE, detail, int(order[0])
    )
