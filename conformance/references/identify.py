"""Which bundled golden a server's vectors belong to, when its model name names none.

Servers serve bundled models under other names (Ollama calls all-MiniLM-L6-v2 'all-minilm').
Matched by name only, such a run would compare the vectors with nothing and could pass a
server that returns one vector for every input. So the suite embeds a few fingerprint inputs
and compares them with every bundled golden: a golden that agrees within the tier is the
reference; when none does, the run stops and names the closest one, with how far it is.

A server whose vectors have no fixed dimension (one vector per token: its length grows with the
input) matches no golden, and no reference would make it right: that is no usage error but a
FAIL of the dimension requirement the answer breaks (``DimensionFailure``), measured by its check.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from conformance.checks import dimension
from conformance.checks.agreement import cosine_distances
from conformance.checks.result import CheckResult
from conformance.client import EmbeddingsClient, EndpointError, Exchange
from conformance.references import (
    DEFAULT_SOURCE,
    ReferenceSpec,
    bundled_golden,
    bundled_models,
    golden_root,
    load_golden,
    parse_reference,
    reference_cases,
)
from conformance.references.recording import Recording
from conformance.requirements import judged_by
from conformance.wire import Matrix

# Short and long English, other scripts, code, numbers, emoji: inputs on which models that
# differ (in weights, pooling, layers, normalization) give clearly different vectors.
FINGERPRINT = (
    "en-sent-01",
    "en-para-03",
    "zh-04",
    "he-02",
    "code-js-02",
    "num-05",
    "emoji-02",
    "ret-q-01",
)
WAYS_OUT = (
    "Compare with a reference of your own: --reference golden:DIR, "
    "--reference sentence-transformers:PATH, or the URL of a trusted server (e.g. bare vLLM); "
    "or run without one: --reference none (vectors not compared with any reference)."
)
WRONG_WHATEVER_THE_REFERENCE = (
    "a dimension that grows with the input is wrong whatever the reference"
)
SHORT_INPUT = "hi"  # one word: asked only when the fingerprint's dimension matches no golden


class DimensionFailure(ValueError):
    """Identification stopped because the server's vectors have no fixed dimension: a FAIL of
    ``requirement`` (its check's ``result`` on the answer ``exchange``), not a usage error."""

    def __init__(self, requirement: str, result: CheckResult, exchange: Exchange) -> None:
        super().__init__(result.detail)
        self.requirement, self.result, self.exchange = requirement, result, exchange


@dataclass(frozen=True)
class Candidate:
    name: str  # MODEL/SOURCE of a bundled golden
    recording: Recording
    distance: float  # max 1 - cosine over the fingerprint; inf when the dimension differs


def fingerprint_distance(vectors: Matrix, recording: Recording) -> float:
    """The largest 1 - cosine between the server's fingerprint vectors and the golden's."""
    expected = recording.matrix(FINGERPRINT)
    if vectors.shape != expected.shape:
        return float("inf")
    distance = float(cosine_distances(vectors, expected).max())
    return distance if np.isfinite(distance) else float("inf")


def bundled_candidates(vectors: Matrix) -> list[Candidate]:
    """Every bundled golden (its default source), closest first."""
    candidates = []
    for model in bundled_models():
        recording = load_golden(golden_root() / model / DEFAULT_SOURCE)
        distance = fingerprint_distance(vectors, recording)
        candidates.append(Candidate(f"{model}/{DEFAULT_SOURCE}", recording, distance))
    return sorted(candidates, key=lambda c: c.distance)


def fingerprint_vectors(client: EmbeddingsClient) -> Matrix:
    """The server's vectors for the fingerprint inputs; ValueError when it gives none,
    DimensionFailure when they differ in length (dimension.consistent)."""
    by_id = {case.id: case for case in reference_cases()}
    texts = [by_id[case_id].text for case_id in FINGERPRINT]
    unread = (
        f"no reference for model {client.model!r}: no bundled golden has that name, and "
        f"its vectors for {len(texts)} fingerprint inputs could not be read"
    )
    try:
        exchange = client.embed(texts, encoding_format="float")
        if not exchange.ok or exchange.batch is None:
            raise ValueError(exchange.describe()[:200])
        lengths = {len(v) for v in exchange.batch.vectors if v is not None}
        if len(lengths) > 1:  # not stackable for want of a fixed dimension
            consistent = dimension.consistent(exchange.batch)
            stacking = f"vectors of different lengths {sorted(lengths)} cannot be stacked"
            message = f"{unread} ({stacking}): {WRONG_WHATEVER_THE_REFERENCE}; {consistent.detail}"
            result = replace(consistent, detail=message)
            raise DimensionFailure(judged_by(dimension.consistent), result, exchange)
        return exchange.batch.matrix()
    except DimensionFailure:
        raise
    except (EndpointError, ValueError) as exc:
        raise ValueError(f"{unread} ({exc}). " + WAYS_OUT) from None


def check_fixed_across_lengths(client: EmbeddingsClient, vectors: Matrix) -> None:
    """Raise DimensionFailure (dimension.fixed-across-lengths) when a one-word input gets a
    vector of another length than the fingerprint's: their dimension depends on the input's
    length. Any other answer (or none) leaves the usual 'matches none' message to be given."""
    try:
        short = client.embed(SHORT_INPUT, encoding_format="float")
    except EndpointError:
        return
    vector = short.batch.first_vector if short.ok and short.batch is not None else None
    if vector is None or len(vector) == vectors.shape[1]:
        return
    result = dimension.fixed_across_lengths(vector, vectors[0])
    message = (
        f"no reference for model {client.model!r}: no bundled golden has that name, and its "
        f"vectors match none: their dimension depends on the input's length ({len(vector)} for "
        f"{SHORT_INPUT!r}, {vectors.shape[1]} for the {len(FINGERPRINT)} fingerprint inputs): "
        f"{WRONG_WHATEVER_THE_REFERENCE}"
    )
    failure = replace(result, detail=message)
    raise DimensionFailure(judged_by(dimension.fixed_across_lengths), failure, short)


def identify_by_vectors(client: EmbeddingsClient, cosine_atol: float) -> ReferenceSpec:
    """The bundled golden whose fingerprint the server's vectors match within ``cosine_atol``;
    ValueError with the closest candidate and the ways out when none does; DimensionFailure when
    the vectors have no fixed dimension."""
    vectors = fingerprint_vectors(client)
    candidates = bundled_candidates(vectors)
    if not candidates:
        raise ValueError(f"no reference for model {client.model!r}: none is bundled. {WAYS_OUT}")
    best = candidates[0]
    if best.distance == float("inf"):  # no golden of this dimension: is there a fixed one?
        check_fixed_across_lengths(client, vectors)
    if best.distance <= cosine_atol:
        path = golden_root() / best.name
        label = (
            f"bundled golden {best.name}, identified by its vectors as {best.recording.model} "
            f"(1 - cosine <= {best.distance:.2g} on {len(FINGERPRINT)} fingerprint inputs); "
            f"served as {client.model!r}"
        )
        return ReferenceSpec("golden", str(path), label, best.recording)
    how_far = (
        "another dimension"
        if best.distance == float("inf")
        else f"1 - cosine up to {best.distance:.3g} on {len(FINGERPRINT)} fingerprint inputs, "
        f"where the tier allows {cosine_atol:g}"
    )
    raise ValueError(
        f"no reference for model {client.model!r}: no bundled golden has that name, and its "
        f"vectors match none. The closest is {best.name} ({how_far}): if the server serves "
        f"{best.recording.model}, its vectors are wrong. " + WAYS_OUT
    )


def choose_reference(
    named: str | None, client: EmbeddingsClient, cosine_atol: float
) -> ReferenceSpec | None:
    """The reference of a run: ``named`` (--reference) when given; else the bundled golden
    named like the served model; else the bundled golden its vectors match. None only for
    --reference none. DimensionFailure: the vectors have no fixed dimension (a FAIL)."""
    if named is not None or bundled_golden(client.model) is not None:
        return parse_reference(named, client.model)
    return identify_by_vectors(client, cosine_atol)
