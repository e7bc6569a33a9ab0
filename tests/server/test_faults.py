"""The faults' names and their wiring: FaultName (what mypy checks every table key and
comparison against) names exactly the faults of FAULTS, each fault is wired into a hook table
of its own layer, and a name from outside is checked where it comes in."""

from __future__ import annotations

from collections.abc import Collection
from typing import get_args

import pytest

from conformance.server import frontend, responses
from conformance.server.engines import sentence_transformers
from conformance.server.faults import FAULTS, LEAKS_SHARED_MEMORY, FaultName, parse_fault, worker

# Per layer, its tables of what a fault does at each hook point
HOOK_TABLES: dict[str, tuple[Collection[FaultName], ...]] = {
    "engine": (
        sentence_transformers.FAULTY_POOLERS,
        sentence_transformers.FAULTY_NORMALIZATION,
        sentence_transformers.UNPOOLED,
        sentence_transformers.SETTINGS_CHANGED,
        sentence_transformers.TEXT_FEATURES_CHANGED,
        sentence_transformers.FEATURES_CHANGED,
    ),
    "worker": (
        worker.TEXT_READERS,
        worker.TEXT_EMBEDDERS,
        worker.TOGETHER_FAULTS,
        worker.DIMENSIONS_READINGS,
        worker.ROW_FAULTS,
        worker.PROMPT_TOKENS,
        LEAKS_SHARED_MEMORY,
    ),
    "frontend": (
        frontend.LAX_FAULTS,
        frontend.UNKNOWN_FORMAT,
        frontend.ERRORS_AS_500,
        frontend.BEFORE_VALIDATION,
        frontend.AFTER_VALIDATION,
        frontend.ROUTE_STATES,
        responses.BASE64_REWRITES,
        responses.ANSWER_REWRITES,
    ),
}


def test_the_fault_names_are_the_faults() -> None:
    names = get_args(FaultName)
    assert len(names) == len(set(names))
    assert set(names) == set(FAULTS)
    assert all(name == fault.name for name, fault in FAULTS.items())


@pytest.mark.parametrize("layer", sorted(HOOK_TABLES))
def test_every_fault_is_wired_into_a_hook_table_of_its_layer(layer: str) -> None:
    wired = set().union(*HOOK_TABLES[layer])
    assert wired == {name for name, fault in FAULTS.items() if fault.layer == layer}


def test_a_fault_named_from_outside_is_checked_where_it_comes_in() -> None:
    assert parse_fault("cross-talk") == "cross-talk"
    assert parse_fault(None) is None
    with pytest.raises(ValueError, match="unknown fault 'crosstalk'; one of: per-token, "):
        parse_fault("crosstalk")
