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


# batch.request-shapes and batch.documented-limits: rows in place, judged against inputs alone

IN_ORDER = list(range(64))


def test_rows_in_place_pass_and_skip_inputs_refused_alone() -> None:
    alone = ALONE.astype(np.float64)
    alone[5] = np.nan  # refused alone (past the context): nothing owed for its row
    served = ALONE.copy()
    served[5] = 0.0
    result = batch.documented_limits(IN_ORDER, served, alone, 1e-5, WHAT)
    assert result.passed, result.describe()


def test_rows_in_place_fail_a_row_shifted_by_one_naming_it() -> None:
    shifted = np.concatenate([ALONE[:10], ALONE[9:63]])  # an over-long input split at row 9
    result = batch.documented_limits(IN_ORDER, shifted, ALONE, 1e-5, WHAT)
    assert not result.passed
    assert result.index == 10
    assert "54 of 64 rows past the limit (max |Δ| / ||v||), the first at index 10" in result.detail


def test_rows_in_place_fail_indices_renumbered_or_counted_from_elsewhere() -> None:
    counted_on = [i + 7 for i in IN_ORDER]  # counted across a merged engine batch
    result = batch.documented_limits(counted_on, ALONE, ALONE, 1e-5, WHAT)
    assert not result.passed and result.measured == "index 7 at item 0"
    too_few = batch.documented_limits(IN_ORDER[:60], ALONE[:60], ALONE, 1e-5, WHAT)
    assert not too_few.passed and too_few.measured == "too few"


def test_documented_limits_served_warns_on_a_clean_refusal_only() -> None:
    assert batch.documented_limits_served(200, "2048 inputs").passed
    assert not batch.documented_limits_served(413, "2048 inputs").passed  # a size limit
    assert not batch.documented_limits_served(400, "2048 inputs").passed
    assert batch.documented_limits_served(500, "2048 inputs").passed  # the MUST's to fail


def test_request_shapes_reports_the_last_violation_the_smallest() -> None:
    first = batch.documented_limits(IN_ORDER, ALONE[::-1], ALONE, 1e-5, "big shape")
    smallest = batch.documented_limits([1], ALONE[:1], ALONE[:1], 1e-5, "small shape")
    assert batch.request_shapes(9, [first, smallest]) is smallest
    assert batch.request_shapes(9, []).passed
