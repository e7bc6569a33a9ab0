"""batch.large: the rows of one large request against the server's own single answers."""

from __future__ import annotations

import numpy as np

from conformance.checks import batch

RNG = np.random.default_rng(7)
ALONE = RNG.standard_normal((64, 8)).astype(np.float32)  # each input's answer sent alone
WHAT = "row i of one request of 64 inputs vs input i sent alone"


def test_large_passes_rows_equal_to_the_servers_own_singles() -> None:
    # whatever a reference says of these vectors: that is reference.agreement's to judge
    result = batch.large(ALONE.copy(), ALONE, 1e-5, WHAT)
    assert result.passed
    assert result.measured == 0.0


def test_large_fails_chunks_reassembled_last_first_naming_the_row() -> None:
    reassembled = np.concatenate([ALONE[32:], ALONE[:32]])  # chunks of 32, last chunk first
    result = batch.large(reassembled, ALONE, 1e-5, WHAT)
    assert not result.passed
    assert result.index is not None and result.measured > 0.1
    assert result.detail.startswith(WHAT)


def test_large_fails_a_dropped_tail() -> None:
    result = batch.large(ALONE[:60], ALONE, 1e-5, WHAT)
    assert not result.passed
    assert "cannot be compared" in result.detail
