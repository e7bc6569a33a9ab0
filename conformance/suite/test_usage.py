"""Token accounting across requests."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.checks import envelope, reference, usage
from conformance.checks.agreement import cosine_distances
from conformance.client import Exchange
from conformance.references import Recording
from conformance.requirements import judged_by
from conformance.run.expect import Expect
from conformance.run.settings import Settings
from conformance.suite.pytest_fixtures import Answers
from conformance.suite.reference_corpus import compared_cases, no_token_ids, spread
from conformance.wire import EmbeddingBatch, Vector

PREFIX_WORDS = (2, 8, 24, 64, 120)
COUNTED = 64  # corpus inputs sent alone for their token count: every kind, script and length


def prompt_tokens(expect: Expect, exchange: Exchange, ids: list[str]) -> int:
    batch: EmbeddingBatch = expect.ok(exchange, ids)
    value = batch.usage.prompt_tokens if batch.usage else None
    if not isinstance(value, int) or isinstance(value, bool):
        what = f"usage.prompt_tokens is {value!r}, not an integer"
        expect.unmeasurable(what, exchange, ids, because=(judged_by(envelope.usage),))
    return value


@pytest.mark.requirement("usage.batch-additive")
def test_batch_tokens_are_the_sum_of_singles(
    expect: Expect, batch_float: Exchange, singles: list[Exchange], batch_ids: list[str]
) -> None:
    total = prompt_tokens(expect, batch_float, batch_ids)
    parts = [
        prompt_tokens(expect, exchange, [case_id])
        for exchange, case_id in zip(singles, batch_ids, strict=True)
    ]
    expect(usage.batch_additive(total, parts), exchange=batch_float)


@pytest.mark.requirement("usage.monotonic-length")
def test_longer_text_never_has_fewer_tokens(
    expect: Expect, answers: Answers, long_input: tuple[str, str]
) -> None:
    words = long_input[1].split()  # cut to fit a short context
    sizes = [n for n in PREFIX_WORDS if n < len(words)] + [len(words)]
    prefixes = [" ".join(words[:n]) for n in sizes]
    ids = [f"long-200[:{n} words]" for n in sizes]
    counts = [
        prompt_tokens(expect, answers.get(text, encoding_format="float"), [case_id])
        for text, case_id in zip(prefixes, ids, strict=True)
    ]
    expect(usage.monotonic_length(counts), cases=ids)


@pytest.mark.requirement("usage.counts-tokens")
def test_each_input_counts_its_tokens(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    needs_reference: Recording,
    context: int | None,
) -> None:
    """64 corpus inputs within the context, each sent alone: its prompt_tokens against the
    reference tokenizer's count (the reference is the truth, never the server's /tokenize).
    The vector of each answer is held against the reference's too: a count that differs where
    the vector does also is the tokenizer's difference, which reference.agreement judges."""
    counted = [
        c for c in compared_cases(needs_reference, context) if needs_reference.token_ids(c.id)
    ]
    cases = spread(counted, COUNTED)
    special_tokens = needs_reference.special_tokens
    if not cases or special_tokens is None:
        no_token_ids(needs_reference)
    ids = [c.id for c in cases]
    exchanges = [answers.get(c.text, encoding_format="float") for c in cases]
    reported = [prompt_tokens(expect, e, [c.id]) for e, c in zip(exchanges, cases, strict=True)]
    truth = [len(needs_reference.token_ids(case_id) or ()) for case_id in ids]
    texts = [c.text for c in cases]
    distances = [
        distance_to_reference(e, needs_reference.vector(case_id))
        for e, case_id in zip(exchanges, ids, strict=True)
    ]
    cosine_atol = settings.tolerances.cosine_atol
    agreement = (judged_by(reference.agreement),)
    result = usage.counts_tokens(
        reported, truth, special_tokens, texts, ids, distances, cosine_atol, agreement
    )
    carrier = exchanges[result.index] if result.index is not None else None
    expect(result, exchange=carrier, cases=ids)


def distance_to_reference(exchange: Exchange, expected: Vector | None) -> float | None:
    """1 - cosine between the answer's (first) vector and the reference's; None when the two
    cannot be compared (no vector, another length, non-finite values: other requirements
    judge those), so that such an answer's count is judged as any other."""
    vector = exchange.batch.first_vector if exchange.batch is not None else None
    if vector is None or expected is None or vector.shape != expected.shape:
        return None
    if not np.isfinite(vector).all():
        return None
    return float(cosine_distances(vector[None, :], expected[None, :])[0])
