"""Precision tiers and their overrides."""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path

import pytest

from conformance.tolerances import (
    MODEL_TIERS,
    PRECISIONS,
    TIERS,
    Tolerances,
    tier_of,
    tolerances_for,
)

# tolerances_for


@pytest.mark.parametrize("precision", PRECISIONS)
def test_tolerances_default_to_the_tier(precision: str) -> None:
    assert tolerances_for(precision) == TIERS[precision]


def test_fp32_tier_is_bit_exact_for_base64() -> None:
    # two requests: as far apart as any two answers that must be the same vector
    assert tolerances_for("fp32").base64_atol == tolerances_for("fp32").vector_atol


def test_lower_precision_tiers_are_looser() -> None:
    fp32, fp16, bf16 = (tolerances_for(p) for p in ("fp32", "fp16", "bf16"))
    assert fp32.vector_atol < fp16.vector_atol < bf16.vector_atol
    assert fp32.norm_atol < fp16.norm_atol < bf16.norm_atol
    assert fp32.base64_atol < fp16.base64_atol < bf16.base64_atol
    assert fp32.reference_atol < fp16.reference_atol < bf16.reference_atol
    assert fp32.cosine_atol < fp16.cosine_atol < bf16.cosine_atol
    assert fp32.retrieval_tie < fp16.retrieval_tie < bf16.retrieval_tie


@pytest.mark.parametrize("model", [None, *MODEL_TIERS])
def test_q4_k_m_holds_every_limit_of_q8_0_and_fp32(model: str | None) -> None:
    """The quantized tiers nest, for any model and for each measured one: a fault the suite
    catches at q4_k_m (the mutation rows that change vectors run there) it catches at q8_0 and
    fp32 too."""
    fp32, q8_0, q4_k_m = (astuple(tier_of(tier, model)) for tier in ("fp32", "q8_0", "q4_k_m"))
    assert all(a <= b <= c for a, b, c in zip(fp32, q8_0, q4_k_m, strict=True))


@pytest.mark.parametrize("model", [None, *MODEL_TIERS])
@pytest.mark.parametrize("precision", PRECISIONS)
def test_no_tier_accepts_a_vector_at_right_angles_nor_halfway(
    precision: str, model: str | None
) -> None:
    tier = tier_of(precision, model)
    assert tier.cosine_atol <= 0.5
    assert tier.cosine_median_atol <= tier.cosine_atol


@pytest.mark.parametrize("precision", PRECISIONS)
def test_a_measured_models_own_limits_are_never_looser_than_the_tiers(precision: str) -> None:
    """The tier's limits for any model are the widest over the measured ones."""
    for tiers in MODEL_TIERS.values():
        own = astuple(tiers.get(precision, TIERS[precision]))
        assert all(a <= b for a, b in zip(own, astuple(TIERS[precision]), strict=True))


def test_the_model_is_found_in_any_case_with_or_without_its_organisation() -> None:
    own = MODEL_TIERS["all-MiniLM-L6-v2"]["q4_k_m"]
    assert tier_of("q4_k_m", "sentence-transformers/all-minilm-l6-v2") == own
    assert tier_of("q4_k_m", "all-MiniLM-L6-v2") == own
    assert own.cosine_median_atol < TIERS["q4_k_m"].cosine_median_atol
    assert tier_of("q4_k_m", "some-other-model") == TIERS["q4_k_m"]
    assert tier_of("fp32", "all-MiniLM-L6-v2") == TIERS["fp32"]  # measured: q8_0, q4_k_m


def test_an_override_applies_over_the_models_own_limits() -> None:
    tolerances = tolerances_for("q4_k_m", "all-MiniLM-L6-v2", cosine_atol=0.3)
    assert tolerances.cosine_atol == 0.3
    assert (
        tolerances.cosine_median_atol
        == MODEL_TIERS["all-MiniLM-L6-v2"]["q4_k_m"].cosine_median_atol
    )


@pytest.mark.parametrize("precision", ["q8_0", "q4_k_m"])
def test_quantized_tiers_keep_the_fp32_bar_for_the_norm(precision: str) -> None:
    """Quantized weights do not move the norm: servers normalize the pooled vector in f32."""
    assert TIERS[precision].norm_atol == TIERS["fp32"].norm_atol


def test_override_replaces_only_the_given_field() -> None:
    tolerances = tolerances_for("fp16", norm_atol=0.5)
    assert tolerances.norm_atol == 0.5
    assert tolerances.vector_atol == TIERS["fp16"].vector_atol
    assert tolerances.base64_atol == TIERS["fp16"].base64_atol


def test_all_overrides_apply() -> None:
    tolerances = tolerances_for(
        "bf16",
        vector_atol=1.0,
        norm_atol=2.0,
        base64_atol=3.0,
        reference_atol=4.0,
        cosine_atol=5.0,
        cosine_median_atol=6.0,
        retrieval_tie=7.0,
    )
    assert tolerances == Tolerances(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)


def test_zero_override_is_applied_not_ignored() -> None:
    assert tolerances_for("bf16", vector_atol=0.0).vector_atol == 0.0


def test_overrides_do_not_change_the_tier() -> None:
    before = TIERS["fp32"]
    tolerances_for("fp32", vector_atol=9.0)
    assert TIERS["fp32"] == before
    assert TIERS["fp32"].vector_atol == 1e-5


def test_the_documented_tier_table_is_tiers() -> None:
    """docs/precision.md's table of tiers shows each tier's limits as tolerances.py holds them,
    and each measured model's own ("q4_k_m, all-MiniLM-L6-v2")."""
    guide = Path(__file__).resolve().parents[2] / "docs" / "precision.md"
    readme = guide.read_text(encoding="utf-8")
    rows = {
        cells[0].strip("`"): cells
        for line in readme.splitlines()
        if line.startswith("| ") and (cells := [c.strip() for c in line.strip("|").split("|")])
    }
    tiers = {
        **TIERS,
        **{
            f"{name}, {model}": tier
            for model, own in MODEL_TIERS.items()
            for name, tier in own.items()
        },
    }
    for name, tier in tiers.items():
        shown = [float(cell) for cell in rows[name][2:8]]
        assert shown == [
            tier.vector_atol,
            tier.norm_atol,
            tier.reference_atol,
            tier.cosine_atol,
            tier.cosine_median_atol,
            tier.retrieval_tie,
        ], name
        assert tier.base64_atol == tier.vector_atol  # one column shows both
