"""The precision tiers and their measurement (scripts/measure_tiers.py): the published limits
are what the recorded measurement (docs/tiers/measurement.json) derives. Measuring again needs
llama.cpp (tox -e tiers); this checks that nobody changed a limit, or the rule, without it."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("measure_tiers")  # its dataclasses look their module up there


@pytest.fixture(scope="module")
def recorded(script: ModuleType) -> dict[str, Any]:
    return dict(json.loads((script.OUT / "measurement.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    ("value", "rounded"),
    [(3.4e-7, 5e-7), (5e-7, 5e-7), (5.08e-7, 1e-6), (0.0117, 0.02), (0.19, 0.2), (0.5004, 1.0)],
)
def test_limits_round_up_to_1_2_or_5(script: ModuleType, value: float, rounded: float) -> None:
    assert script.nice_ceil(value) == pytest.approx(rounded)


def test_the_published_tiers_are_what_the_recorded_measurement_derives(
    script: ModuleType, recorded: dict[str, Any]
) -> None:
    """TIERS over both models, MODEL_TIERS for each (tolerances.py), and the page's limits."""
    limits = script.derive(recorded["measured"])
    by_model = script.derive_by_model(recorded["measured"])
    assert script.verdicts(limits, by_model) == []
    assert limits == recorded["limits"]
    assert by_model == recorded["by_model"]
    assert (script.OUT / "README.md").read_text(encoding="utf-8") == script.markdown(
        recorded["measured"], limits, by_model
    )


def test_a_limit_the_margin_takes_past_a_right_angles_half_is_held_there(
    script: ModuleType, recorded: dict[str, Any]
) -> None:
    """nomic's q4_K_M worst input, 0.2502, times 2 is just past 0.5: the limit stays at 0.5."""
    limits = script.derive(recorded["measured"])
    assert limits["q4_k_m"]["cosine_atol"] == 0.5
    assert script.nice_ceil(2 * 0.2502) == 1.0


def test_a_changed_limit_is_named(script: ModuleType, recorded: dict[str, Any]) -> None:
    """A tier whose measurement grew past its published limit fails the check, naming it."""
    measured = json.loads(json.dumps(recorded["measured"]))
    for m in measured:
        if m["tier"] == "q8_0":
            m["agreement"]["one_minus_cosine"]["max"] *= 3
        if m["tier"] == "fp16":
            m["batch_noise"]["max"] = 5e-3
    problems = script.verdicts(script.derive(measured), script.derive_by_model(measured))
    assert any(p.startswith("q8_0 cosine_atol: measured 0.05") for p in problems), problems
    assert any(p.startswith("fp16 vector_atol: measured 0.01 > published") for p in problems)
    named = "q8_0 (all-MiniLM-L6-v2) cosine_atol: measured 0.02, published 0.005"
    assert any(p.startswith(named) for p in problems), problems


def test_every_model_and_tier_was_measured(script: ModuleType, recorded: dict[str, Any]) -> None:
    served = {(s.model, s.tier) for s in script.SERVED}
    assert served <= {(m["model"], m["tier"]) for m in recorded["measured"]}
    assert set(script.DERIVED) | set(script.CONFIRMED) <= {m["tier"] for m in recorded["measured"]}


def test_the_kernel_page_is_what_its_measurement_renders(script: ModuleType) -> None:
    """docs/tiers/kernel.md: every quantized server against its own weights, as measured."""
    document = json.loads((ROOT / "docs" / "tiers" / "kernel.json").read_text())
    assert (ROOT / "docs" / "tiers" / "kernel.md").read_text() == script.kernel_markdown(document)
    quantized = {(s.model, s.tier) for s in script.SERVED if s.tier in script.DERIVED}
    assert {(m["kernel"]["model"], m["kernel"]["tier"]) for m in document["measured"]} == quantized
    assert script.kernel_document(document["measured"]) == document
    assert script.verdicts(document["limits"], document["by_model"]) == []
