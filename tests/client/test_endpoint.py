"""Endpoint parsing: which routes a typed URL names."""

from __future__ import annotations

import pytest

from conformance.client import Endpoint, parse_endpoint

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
