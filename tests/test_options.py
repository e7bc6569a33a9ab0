"""Endpoint parsing and precision tiers."""

from __future__ import annotations

import pytest

from conformance.options import Endpoint, parse_endpoint
from conformance.tolerances import TIERS, Tolerances, tolerances_for

# parse_endpoint


@pytest.mark.parametrize(
    ("text", "embeddings_url", "models_url"),
    [
        ("http://h:8000", "http://h:8000/v1/embeddings", "http://h:8000/v1/models"),
        ("http://h:8000/", "http://h:8000/v1/embeddings", "http://h:8000/v1/models"),
        ("http://h:8000/v1", "http://h:8000/v1/embeddings", "http://h:8000/v1/models"),
        ("http://h:8000/v1/", "http://h:8000/v1/embeddings", "http://h:8000/v1/models"),
        ("https://h/prefix/v1/", "https://h/prefix/v1/embeddings", "https://h/prefix/v1/models"),
        ("http://h/custom/embeddings", "http://h/custom/embeddings", "http://h/custom/models"),
        ("http://h/v1/embeddings/", "http://h/v1/embeddings", "http://h/v1/models"),
        ("  http://h:8000  ", "http://h:8000/v1/embeddings", "http://h:8000/v1/models"),
    ],
)
def test_parse_endpoint_derives_both_routes(
    text: str, embeddings_url: str, models_url: str
) -> None:
    endpoint = parse_endpoint(text)
    assert endpoint.embeddings_url == embeddings_url
    assert endpoint.models_url == models_url


def test_parse_endpoint_keeps_the_query_string_on_both_routes() -> None:
    endpoint = parse_endpoint("http://h:8000/v1?api-version=2024-01-01")
    assert endpoint.embeddings_url == "http://h:8000/v1/embeddings?api-version=2024-01-01"
    assert endpoint.models_url == "http://h:8000/v1/models?api-version=2024-01-01"


def test_parse_endpoint_keeps_the_query_string_of_a_full_url() -> None:
    endpoint = parse_endpoint("http://h/custom/embeddings?key=a&b=c")
    assert endpoint.embeddings_url == "http://h/custom/embeddings?key=a&b=c"
    assert endpoint.models_url == "http://h/custom/models?key=a&b=c"


@pytest.mark.parametrize(
    "text", ["ftp://h:8000", "localhost:8000", "h:8000/v1", "http://", "", "file:///tmp/x"]
)
def test_parse_endpoint_rejects_a_non_http_url(text: str) -> None:
    with pytest.raises(ValueError, match="not an http"):
        parse_endpoint(text)


# Endpoint.api_base


def test_api_base_is_the_parent_of_the_embeddings_route() -> None:
    assert parse_endpoint("http://h:8000").api_base == "http://h:8000/v1"
    assert parse_endpoint("https://h/prefix/v1/").api_base == "https://h/prefix/v1"
    assert parse_endpoint("http://h/custom/embeddings").api_base == "http://h/custom"


def test_api_base_is_none_when_the_route_is_not_named_embeddings() -> None:
    endpoint = Endpoint(embeddings_url="http://h/embed", models_url="http://h/models")
    assert endpoint.api_base is None


# tolerances_for


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_tolerances_default_to_the_tier(precision: str) -> None:
    assert tolerances_for(precision) == TIERS[precision]


def test_fp32_tier_is_bit_exact_for_base64() -> None:
    assert tolerances_for("fp32").base64_atol == 0.0


def test_lower_precision_tiers_are_looser() -> None:
    fp32, fp16, bf16 = (tolerances_for(p) for p in ("fp32", "fp16", "bf16"))
    assert fp32.vector_atol < fp16.vector_atol < bf16.vector_atol
    assert fp32.norm_atol < fp16.norm_atol < bf16.norm_atol
    assert fp32.base64_atol < fp16.base64_atol < bf16.base64_atol
    assert fp32.reference_atol < fp16.reference_atol < bf16.reference_atol
    assert fp32.cosine_atol < fp16.cosine_atol < bf16.cosine_atol


def test_override_replaces_only_the_given_field() -> None:
    tolerances = tolerances_for("fp16", norm_atol=0.5)
    assert tolerances.norm_atol == 0.5
    assert tolerances.vector_atol == TIERS["fp16"].vector_atol
    assert tolerances.base64_atol == TIERS["fp16"].base64_atol


def test_all_overrides_apply() -> None:
    tolerances = tolerances_for(
        "bf16", vector_atol=1.0, norm_atol=2.0, base64_atol=3.0, reference_atol=4.0, cosine_atol=5.0
    )
    assert tolerances == Tolerances(1.0, 2.0, 3.0, reference_atol=4.0, cosine_atol=5.0)


def test_zero_override_is_applied_not_ignored() -> None:
    assert tolerances_for("bf16", vector_atol=0.0).vector_atol == 0.0


def test_overrides_do_not_change_the_tier() -> None:
    before = TIERS["fp32"]
    tolerances_for("fp32", vector_atol=9.0)
    assert TIERS["fp32"] == before
    assert TIERS["fp32"].vector_atol == 1e-5
