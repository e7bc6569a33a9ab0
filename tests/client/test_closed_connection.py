"""A server that closes a kept-alive connection after answering (uvicorn does after an unhandled
500, without "Connection: close") costs the next request nothing: the client opens a new
connection and sends it again, as HTTP clients do. A server that resets every connection
still fails, with its reason."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from conformance.client import EmbeddingsClient, EndpointError, parse_endpoint
from conformance.client.http import closed_before_answering

ANSWER = (
    b'{"object":"list","model":"m","data":[{"object":"embedding","index":0,'
    b'"embedding":[0.6,0.8]}],"usage":{"prompt_tokens":1,"total_tokens":1}}'
)


def serve(listener: socket.socket, answer: bool) -> None:
    """Each connection: read one request, answer it keep-alive (or not at all), then close
    it a moment later, unread, as a server does that drops the connection after an error."""
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            data = b""
            while b"\r\n\r\n" not in data:
                data += connection.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(
                next(
                    line.split(b":")[1]
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
            )
            while len(rest) < length:
                rest += connection.recv(65536)
            if answer:
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(ANSWER)}\r\n\r\n".encode()
                    + ANSWER
                )
                time.sleep(0.3)  # the client's next request arrives, then the close


@pytest.fixture(params=[True, False], ids=["answers-then-closes", "closes-unanswered"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, bool]]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    thread = threading.Thread(target=serve, args=(listener, request.param), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", request.param
    listener.close()


def test_a_closed_kept_alive_connection_is_opened_again(server: tuple[str, bool]) -> None:
    url, answers = server
    client = EmbeddingsClient(parse_endpoint(url), "m", None, 5.0)
    if not answers:  # nothing to reconnect to: every connection closes unanswered
        with pytest.raises(EndpointError, match="Remote end closed connection"):
            client.embed("hello")
        return
    for _ in range(3):  # each request after the first finds its pooled connection closed
        exchange = client.embed("hello")
        assert exchange.status == 200 and exchange.batch is not None


def test_only_a_connection_closed_before_any_answer_counts() -> None:
    assert closed_before_answering(ConnectionError(OSError("x", ConnectionResetError(104))))
    assert not closed_before_answering(ConnectionError(ConnectionRefusedError(111)))
    assert not closed_before_answering(TimeoutError())


def test_exceptions_that_refer_to_each_other_end_the_search() -> None:
    first, second = OSError("a"), OSError("b")
    first.__context__, second.__context__ = second, first
    assert not closed_before_answering(first)
