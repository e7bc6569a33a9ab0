"""Which faults each tier sees (scripts/fault_tiers.py, docs/tiers/faults.*): the page is what
the recorded measurement renders, over every fault that changes vectors, and the measurement
agrees with the mutation table. Measuring again needs nothing but this package, but minutes."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from tests.e2e.test_suite_verdicts import LOOSEST, MUTATIONS, SEEN_ONLY_AT
from tests.support.scripts import load_script


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("fault_tiers")  # it imports measure_tiers beside it, as run there


@pytest.fixture(scope="module")
def recorded(script: ModuleType) -> dict[str, Any]:
    return dict(json.loads((script.OUT / "faults.json").read_text(encoding="utf-8")))


def test_the_page_is_what_its_measurement_renders(
    script: ModuleType, recorded: dict[str, Any]
) -> None:
    assert (script.OUT / "faults.md").read_text(encoding="utf-8") == script.markdown(recorded)
    assert [row["fault"] for row in recorded["faults"]] == list(script.VECTOR_FAULTS)
    assert recorded["judged"] == script.JUDGED
    assert not any(recorded["correct_server"].values())  # the correct routes fail nothing


def test_each_fault_fails_its_row_where_the_mutation_table_runs_it(
    script: ModuleType, recorded: dict[str, Any]
) -> None:
    """The measurement and the mutation table (tests/e2e/test_suite_verdicts.py) say the same:
    at the tier a row runs at, the fault fails the requirements of its row that were judged
    here; at a looser tier it is blind, or the row would run there."""
    for row in recorded["faults"]:
        fault, failed = row["fault"], row["failed"]
        tier = SEEN_ONLY_AT.get(fault, LOOSEST)
        judged = {r for r in MUTATIONS[fault] if r.startswith(tuple(script.JUDGED.split(",")))}
        assert judged <= set(failed[tier]), (fault, tier, failed[tier])
        looser = script.TIERS[script.TIERS.index(tier) + 1 :]
        assert all(not failed[t] for t in looser), (fault, failed)


# Faults that only round the vectors: within what a quantized server's batch noise and tiers allow
ROUNDING_FAULTS = {"noise", "fp16-vectors"}


def test_on_quantized_weights_every_fault_fails_against_its_weights_and_the_fp32_golden(
    script: ModuleType, recorded: dict[str, Any]
) -> None:
    """Issue 57's proof: served with the q8_0 and q4_K_M weights, each fault of a wrong
    computation (pooling, prefix, truncation, tokenizer, padding, [SEP], positions, norm) fails
    at the kernel tier against the golden of those weights and at its tier against the fp32
    golden; the correct server fails neither way. Noise and float16 output are rounding, which
    those tiers allow by design (docs/precision.md)."""
    served = recorded["served_weights"]
    assert set(served) == {"q8_0", "q4_k_m"}
    for tier, measured in served.items():
        assert not any(measured["correct_server"].values()), (tier, measured["correct_server"])
        assert set(measured["failed"]) == set(script.VECTOR_FAULTS)
        for fault, ways in measured["failed"].items():
            if fault in ROUNDING_FAULTS:
                assert not any(ways.values()), (tier, fault, ways)
            else:
                assert all(ways.values()), (tier, fault, ways)


# Faults of one cause, and the one requirement each must fail at every tier (issue 57, item 4):
# the norm is normalization.unit-norm's alone; a tokenizer's difference is reference.agreement's
ONE_CAUSE = {
    "no-normalize": {"normalization.unit-norm"},
    "another-tokenizer": {"reference.agreement"},
}


def test_a_fault_of_one_cause_fails_one_requirement_at_every_tier(
    script: ModuleType, recorded: dict[str, Any]
) -> None:
    rows = {row["fault"]: row["failed"] for row in recorded["faults"]}
    for fault, only in ONE_CAUSE.items():
        for tier in script.TIERS:
            assert set(rows[fault][tier]) == only, (fault, tier, rows[fault][tier])
