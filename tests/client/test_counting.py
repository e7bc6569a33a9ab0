"""Every request a client sends is counted, retries apart, with the tokens its embeddings answers
state (usage.prompt_tokens) and apart the answers that state none."""

from __future__ import annotations

from conformance.client import EmbeddingsClient, parse_endpoint
from conformance.client.http import RETRIES
from conformance.client.preflight import open_client
from conformance.wire import RequestCount


def client_for(base_url: str, behaviour: str) -> EmbeddingsClient:
    return EmbeddingsClient(parse_endpoint(f"{base_url}/{behaviour}"), "hostile-model", None, 3.0)


def test_every_request_is_counted_with_the_tokens_its_answer_states(hostile_server: str) -> None:
    client = client_for(hostile_server, "always-429")  # texts answered well: 1 token each
    client.embed(["a", "b", "c"])
    client.embed([[101, 102]])  # 429 (Retry-After: 0), asked RETRIES times again
    client.get_models()  # a request too, though it embeds nothing
    sent = 1 + (1 + RETRIES) + 1
    assert client.request_count.total == RequestCount(sent=sent, retries=RETRIES, tokens=3)
    assert client.retries == RETRIES


def test_answers_that_do_not_state_their_tokens_are_counted_apart(hostile_server: str) -> None:
    cut = client_for(hostile_server, "invalid-json")  # HTTP 200, the JSON cut short
    assert cut.embed(["a", "b"]).status == 200
    assert cut.request_count.total == RequestCount(sent=1, untold=1)
    unread = client_for(hostile_server, "no-models")  # well answered, but read for its status
    assert unread.post_for_status({"model": "m", "input": ["a", "b"]}, 3.0).status == 200
    assert unread.request_count.total == RequestCount(sent=1, untold=1)


def test_the_preflights_model_listing_is_one_of_the_runs_requests(hostile_server: str) -> None:
    client = open_client(parse_endpoint(f"{hostile_server}/always-429"), None, None, 3.0)
    assert client.model == "hostile-model"  # found by GET /v1/models, another client's request
    client.embed("a")
    assert client.request_count.total == RequestCount(sent=2, tokens=1)
