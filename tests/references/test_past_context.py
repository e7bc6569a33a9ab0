"""Which over-context cases are past a model's context, for a golden recorded from an endpoint:
the corpus tags them by MiniLM's 256 tokens, a model with a longer context reads most whole."""

from __future__ import annotations

from conformance.corpus import Case
from conformance.references.sources import past_context

CASES = [
    Case("short", "a", ("english",)),
    Case("ctx-past-300", "b", ("over-context",)),
    Case("ctx-past-2100", "c", ("over-context",)),
]
COUNTS = {"short": [0] * 3, "ctx-past-300": [0] * 300, "ctx-past-2100": [0] * 2100}


def test_a_2048_token_model_reads_300_tokens_whole() -> None:
    assert past_context(CASES, COUNTS, 2048) == ["ctx-past-2100"]


def test_a_256_token_model_reads_neither() -> None:
    assert past_context(CASES, COUNTS, 256) == ["ctx-past-300", "ctx-past-2100"]


def test_every_tagged_case_counts_when_the_context_or_the_count_is_unknown() -> None:
    tagged = ["ctx-past-300", "ctx-past-2100"]
    assert past_context(CASES, COUNTS, None) == tagged
    assert past_context(CASES, None, 2048) == tagged
    assert past_context(CASES, {"ctx-past-300": [0] * 300}, 2048) == ["ctx-past-2100"]
