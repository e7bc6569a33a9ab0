"""A refusal of an over-context input is allowed; when the reference model reads it whole
(nomic's 2,048 tokens), the run says so."""

from __future__ import annotations

import numpy as np

from conformance.references import Recording
from conformance.suite.test_reference import read_whole


def reference(max_tokens: int | None, tokens: dict[str, list[int]] | None) -> Recording:
    manifest = {"case_ids": ["ctx-past-300"], "max_tokens": max_tokens}
    return Recording(manifest, np.zeros((1, 4), dtype=np.float32), tokens)


def test_a_refused_input_the_reference_reads_whole_is_named() -> None:
    said = read_whole(reference(2048, {"ctx-past-300": [0] * 300}), "ctx-past-300")
    assert said == ", though 300 tokens fit the reference's context of 2048"


def test_nothing_is_said_past_the_context_or_without_counts() -> None:
    assert read_whole(reference(256, {"ctx-past-300": [0] * 300}), "ctx-past-300") == ""
    assert read_whole(reference(2048, None), "ctx-past-300") == ""
    assert read_whole(reference(None, {"ctx-past-300": [0] * 300}), "ctx-past-300") == ""
