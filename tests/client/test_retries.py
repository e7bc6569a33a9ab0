"""Retries after a 429 or 503: asked again and counted, or (``retry=False``) not asked again,
so the first answer can be judged (errors.recovers)."""

from __future__ import annotations

from conformance.client import EmbeddingsClient, parse_endpoint
from conformance.client.http import RETRIES


def client_for(base_url: str, behaviour: str) -> EmbeddingsClient:
    return EmbeddingsClient(parse_endpoint(f"{base_url}/{behaviour}"), "hostile-model", None, 3.0)


def test_a_429_is_asked_again_and_every_retry_is_counted(hostile_server: str) -> None:
    client = client_for(hostile_server, "always-429")  # Retry-After: 0
    exchange = client.embed([[101, 102]])
    assert exchange.status == 429
    assert exchange.retries == RETRIES and client.retries == RETRIES
    client.embed([[101, 102]])
    assert client.retries == 2 * RETRIES  # over the client's life, for the suite to count


def test_a_request_sent_with_retry_false_gets_its_first_answer(hostile_server: str) -> None:
    client = client_for(hostile_server, "always-429")
    exchange = client.embed([[101, 102]], retry=False)
    assert exchange.status == 429 and exchange.retries == 0 and client.retries == 0
    assert client.post({"model": "m", "input": [[101]]}, retry=False).retries == 0
    assert client.retries == 0


def test_an_answer_that_needs_no_retry_counts_none(hostile_server: str) -> None:
    client = client_for(hostile_server, "always-429")
    exchange = client.embed(["a"])  # texts are answered well
    assert exchange.ok and exchange.retries == 0 and client.retries == 0
