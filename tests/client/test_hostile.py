"""A hostile server never breaks the client: every misbehaviour becomes a clear, bounded result."""

from __future__ import annotations

import datetime
import email.utils
import time

import pytest
import requests

from conformance.client import EmbeddingsClient, EndpointError, Exchange, parse_endpoint
from conformance.client.http import retry_delay

TIMEOUT = 3.0
CAP = 8 << 20

# behaviour -> phrase in the error (EndpointError) or in the exchange's problem
BROKEN_ANSWERS = {
    "truncated-body": "broke off",
    "close-mid-body": "broke off",
    "huge": "larger than 8 MB",
    "huge-sized": "larger than 8 MB",
    "trickle": f"no complete answer within {TIMEOUT:g} s",
}
BAD_BODIES = {
    "invalid-json": "not valid JSON",
    "html-error": "HTTP status 502",
    "nan-literals": "NaN literal",
    "redirect-loop": "HTTP status 302",
    "redirect-offsite": "HTTP status 307",
}


def client_for(base_url: str, behaviour: str, api_key: str | None = None) -> EmbeddingsClient:
    endpoint = parse_endpoint(f"{base_url}/{behaviour}")
    return EmbeddingsClient(endpoint, "hostile-model", api_key, TIMEOUT, CAP)


@pytest.mark.parametrize("behaviour", sorted(BROKEN_ANSWERS))
def test_broken_answer_is_a_clear_error_within_the_timeout(
    hostile_server: str, behaviour: str
) -> None:
    started = time.monotonic()
    with pytest.raises(EndpointError, match=BROKEN_ANSWERS[behaviour]):
        client_for(hostile_server, behaviour).embed(["a", "b"])
    assert time.monotonic() - started < TIMEOUT + 2


@pytest.mark.parametrize("behaviour", sorted(BAD_BODIES))
def test_bad_body_is_an_exchange_without_a_batch(hostile_server: str, behaviour: str) -> None:
    exchange: Exchange = client_for(hostile_server, behaviour).embed(["a", "b"])
    assert exchange.batch is None
    assert exchange.problem is not None and BAD_BODIES[behaviour] in exchange.problem


def test_well_behaved_string_input_still_works(hostile_server: str) -> None:
    assert client_for(hostile_server, "trickle").embed("a").ok


def test_api_key_never_follows_a_redirect_to_another_host(hostile_server: str) -> None:
    debug = f"{hostile_server}/redirect-offsite/debug/requests"
    requests.delete(debug, timeout=5)
    client_for(hostile_server, "redirect-offsite", api_key="sk-hostile").embed(["a", "b"])
    hosts = [entry["host"] for entry in requests.get(debug, timeout=5).json()]
    assert hosts and not any(host.startswith("127.0.0.2") for host in hosts)


def test_a_rate_limited_request_is_asked_again_after_the_wait_it_names(
    hostile_server: str,
) -> None:
    client = client_for(hostile_server, "rate-limited")
    started = time.monotonic()
    answers = [client.embed(["a", "b"]) for _ in range(2)]
    assert all(exchange.ok for exchange in answers)  # one of the two met a 429 first
    assert time.monotonic() - started >= 1.0  # and waited the second Retry-After asked for


def test_a_persistent_rate_limit_comes_back_as_429(hostile_server: str) -> None:
    exchange = client_for(hostile_server, "always-429").embed([[101, 102]])
    assert exchange.status == 429  # after the retries: the suite then names it rate limited


@pytest.mark.parametrize(
    ("header", "attempt", "wait"),
    [(None, 0, 0.5), (None, 2, 2.0), ("3", 0, 3.0), ("120", 0, 10.0), ("soon", 1, 1.0)],
)
def test_retry_delay_honours_retry_after_within_bounds(
    header: str | None, attempt: int, wait: float
) -> None:
    assert retry_delay(header, attempt) == wait


def test_retry_delay_reads_an_http_date() -> None:
    when = email.utils.format_datetime(
        datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=5), usegmt=True
    )
    assert 3.0 <= retry_delay(when, 0) <= 5.0
