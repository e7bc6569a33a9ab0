"""A server that stops answering costs the client one timeout, not one per request: later
requests fail at once, unsent, naming the hang, while a short probe gets no answer either; a
server that hung on one input only, or that recovers, is used again."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from conformance.client import EmbeddingsClient, EndpointError, HttpClient, parse_endpoint
from conformance.client.http import NoAnswer

TIMEOUT = 0.5  # the probe's timeout is min(5 s, this)
ANSWER = (
    b'{"object":"list","model":"m","data":[{"object":"embedding","index":0,'
    b'"embedding":[0.6,0.8]}],"usage":{"prompt_tokens":1,"total_tokens":1}}'
)


class Wedgeable(ThreadingHTTPServer):
    """Answers GET /v1/models always (as an asyncio frontend does) and embeddings requests
    unless wedged, or unless they hold 'hang': those wait until the test ends."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.wedged = False
        self.posts = 0  # embeddings requests that arrived
        self.release = threading.Event()


class Handler(BaseHTTPRequestHandler):
    server: Wedgeable

    def do_GET(self) -> None:
        self._answer(b'{"object":"list","data":[{"id":"m","object":"model"}]}')

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.posts += 1
        if self.server.wedged or b"hang" in body:
            self.server.release.wait()
            return
        self._answer(ANSWER)

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Wedgeable]:
    httpd = Wedgeable()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.release.set()
    httpd.shutdown()
    httpd.server_close()


def client_of(server: Wedgeable) -> EmbeddingsClient:
    url = f"http://127.0.0.1:{server.server_address[1]}"
    return EmbeddingsClient(parse_endpoint(url), "m", None, TIMEOUT)


def timed(call: Any) -> tuple[Any, float]:
    started = time.monotonic()
    try:
        result = call()
    except EndpointError as exc:
        result = exc
    return result, time.monotonic() - started


def test_a_server_that_hung_on_one_input_is_used_again(server: Wedgeable) -> None:
    client = client_of(server)
    hung, seconds = timed(lambda: client.embed("hang"))
    assert isinstance(hung, NoAnswer) and seconds >= TIMEOUT
    answer, seconds = timed(lambda: client.embed("hello"))
    assert not isinstance(answer, EndpointError) and answer.ok  # the probe was answered
    assert server.posts == 3  # the hung request, the probe, this one
    assert timed(lambda: client.embed("hello"))[1] < TIMEOUT / 2  # no probe any more


def test_a_wedged_server_costs_one_timeout_and_one_probe(server: Wedgeable) -> None:
    client = client_of(server)
    server.wedged = True
    timed(lambda: client.embed("first"))
    refused, seconds = timed(lambda: client.embed("second"))  # after a probe, unsent
    assert isinstance(refused, EndpointError) and TIMEOUT <= seconds < 2 * TIMEOUT
    url = client.endpoint.embeddings_url
    assert str(refused).startswith(f"POST {url}: not sent: the server stopped answering: ")
    assert f"POST {url} got no answer within {TIMEOUT:g} s (--request-timeout) at " in str(refused)
    # The models route answers all along: only a request that needs the model tells.
    assert f"nor did a one-word embeddings request within {TIMEOUT:g} s since" in str(refused)
    posts = server.posts
    for _ in range(5):
        refused, seconds = timed(lambda: client.embed("later"))
        assert isinstance(refused, EndpointError) and seconds < TIMEOUT / 5
    assert server.posts == posts  # nothing sent


def test_concurrent_requests_to_a_wedged_server_wait_for_one_probe(server: Wedgeable) -> None:
    client = client_of(server)
    server.wedged = True
    timed(lambda: client.embed("first"))

    def send(text: str) -> tuple[Any, float]:
        return timed(lambda: client.embed(text))

    with ThreadPoolExecutor(8) as pool:
        results, seconds = timed(lambda: list(pool.map(send, ["a"] * 8)))
    assert all(isinstance(result, EndpointError) for result, _ in results)
    assert seconds < 2 * TIMEOUT  # one probe, not one per thread
    assert server.posts == 2  # the first request and the probe


def test_a_server_that_recovers_is_asked_again_after_a_timeout(server: Wedgeable) -> None:
    client = client_of(server)
    server.wedged = True
    timed(lambda: client.embed("first"))
    timed(lambda: client.embed("second"))  # the probe fails
    server.wedged = False
    assert isinstance(timed(lambda: client.embed("soon"))[0], EndpointError)  # not yet probed
    time.sleep(TIMEOUT)
    answer, _ = timed(lambda: client.embed("later"))
    assert not isinstance(answer, EndpointError) and answer.ok


def test_a_client_without_a_model_probes_the_models_route(server: Wedgeable) -> None:
    url = f"http://127.0.0.1:{server.server_address[1]}"
    client = HttpClient(parse_endpoint(url), None, TIMEOUT)
    server.wedged = True
    with pytest.raises(NoAnswer):
        client.send("POST", client.endpoint.embeddings_url, b"{}", "application/json")
    assert client.get_models().status == 200  # the probe was answered: used again


def test_a_server_busy_with_a_request_that_timed_out_is_waited_for(server: Wedgeable) -> None:
    """A client's timeout cancels nothing on the server: the suite waits (a few timeouts at
    most) until a server still busy with a heavy request answers again, then goes on as usual."""
    client = client_of(server)
    server.wedged = True
    assert isinstance(timed(lambda: client.embed("heavy"))[0], NoAnswer)
    busy_for = 3 * TIMEOUT
    threading.Timer(busy_for, lambda: setattr(server, "wedged", False)).start()
    waited = client.wait_until_answering(patience=20 * TIMEOUT)
    assert waited is not None and busy_for - TIMEOUT <= waited < 20 * TIMEOUT
    answer, seconds = timed(lambda: client.embed("next"))
    assert not isinstance(answer, EndpointError) and answer.ok and seconds < TIMEOUT


def test_a_server_that_never_answers_again_is_waited_for_no_longer_than_told(
    server: Wedgeable,
) -> None:
    client = client_of(server)
    server.wedged = True
    timed(lambda: client.embed("heavy"))
    waited, seconds = timed(lambda: client.wait_until_answering(patience=3 * TIMEOUT))
    assert waited is None and 3 * TIMEOUT <= seconds < 6 * TIMEOUT
    refused, seconds = timed(lambda: client.embed("next"))  # the stall stays: unsent, at once
    assert isinstance(refused, EndpointError) and "not sent" in str(refused)
    waited = client_of(server).wait_until_answering(patience=1.0)
    assert waited is not None and waited < 0.01  # a client that saw no stall waits for nothing
