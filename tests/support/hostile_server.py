"""A deliberately misbehaving OpenAI-style embeddings server, for testing the client's defences.

Every route lives under a behaviour prefix: ``/<behaviour>/v1/models`` and
``/<behaviour>/v1/embeddings``. Models listings and embeddings requests whose ``input`` is a
single string are answered correctly, so the client's preflight passes; every other request to
the embeddings route (a list ``input``, or anything that is not such a POST) gets the hostile
behaviour named by the prefix. See ``BEHAVIOURS``.

``GET /<anything>/debug/requests`` returns, as JSON, every request received so far (method,
path, Host header, whether an Authorization header was present); ``DELETE`` on it clears the
record. A test uses it to prove an API key never reached another host.

Standard library only, and deliberately independent of the ``conformance`` package: the judge
and the judged must not agree merely because they run the same code.

Run: ``python -m tests.support.hostile_server --port 0`` prints ``LISTENING http://HOST:PORT``.
Use ``--host 0.0.0.0`` for ``redirect-offsite``, whose target (127.0.0.2) must reach this server.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import signal
import socket
import socketserver
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import urlsplit

MODEL_ID = "hostile-model"
# Exactly representable, exactly unit-norm: the well-behaved answers are unimpeachable.
UNIT_VECTOR: tuple[float, ...] = (0.5, -0.5, 0.5, -0.5, 0.0, 0.0, 0.0, 0.0)
# Not valid JSON per RFC 8259, yet Python's json.loads accepts all three.
NAN_VECTOR: tuple[float, ...] = (0.5, float("nan"), 0.5, float("inf"), 0.5, float("-inf"), 0.5, 0.0)
OFFSITE_HOST = "127.0.0.2"  # any 127/8 address reaches loopback on Linux
MAX_REQUEST_BYTES = 16 * 1024 * 1024
HUGE_BODY_BYTES = 400 * 1024 * 1024  # exact size of the huge responses
HUGE_CHUNK = b"0.125," * 10923  # ~64 KiB of array elements per write
TRUNCATED_CLAIMED_BYTES = 100_000
TRUNCATED_SENT_BYTES = 1000
TRICKLE_INTERVAL_S = 1.0
SOCKET_TIMEOUT_S = 120.0
CUT_JSON = b'{"object": "list", "data": ['
PROXY_ERROR_PAGE = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n"
    b"</body>\r\n</html>\r\n"
)
CAPTIVE_PAGE = (
    b"<!DOCTYPE html><html><head><title>Sign in</title></head>"
    b"<body><h1>Network login required</h1><p>Please sign in to continue.</p></body></html>"
)
HUGE_HEAD = b'{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": ['
HUGE_TAIL = b'0]}], "model": "hostile-model", "usage": {"prompt_tokens": 1, "total_tokens": 1}}'
# A peer that went away, or stopped reading for longer than the socket timeout.
DISCONNECTED = (ConnectionError, TimeoutError)


# --- Bodies -------------------------------------------------------------------------------


def embeddings_payload(vectors: list[Any]) -> dict[str, Any]:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    usage = {"prompt_tokens": len(vectors), "total_tokens": len(vectors)}
    return {"object": "list", "data": data, "model": MODEL_ID, "usage": usage}


def valid_body(items: int, encoding_format: object = "float") -> bytes:
    """A correct embeddings response with ``items`` copies of the unit vector."""
    vector: Any = list(UNIT_VECTOR)
    if encoding_format == "base64":
        vector = base64.b64encode(struct.pack("<8f", *UNIT_VECTOR)).decode("ascii")
    return json.dumps(embeddings_payload([vector] * items)).encode()


def nan_body(items: int) -> bytes:
    # allow_nan (the default) is what writes the bare NaN / Infinity literals.
    return json.dumps(embeddings_payload([list(NAN_VECTOR)] * items), allow_nan=True).encode()


def huge_body_parts(total: int = HUGE_BODY_BYTES) -> Iterator[bytes]:
    """A valid JSON document of exactly ``total`` bytes: one enormous array of numbers."""
    middle = total - len(HUGE_HEAD) - len(HUGE_TAIL)
    full_chunks, remainder = divmod(middle, len(HUGE_CHUNK))
    yield HUGE_HEAD
    for _ in range(full_chunks):
        yield HUGE_CHUNK
    yield b" " * remainder  # JSON whitespace between elements pads to the exact size
    yield HUGE_TAIL


def trickle(body: bytes) -> Iterator[bytes]:
    """One byte at a time, each after a pause: every read succeeds, the total never ends."""
    for offset in range(len(body)):
        time.sleep(TRICKLE_INTERVAL_S)
        yield body[offset : offset + 1]


def error_body(message: str) -> bytes:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return json.dumps({"error": error}).encode()


# --- Request record -----------------------------------------------------------------------


class RequestLog:
    """What each request carried; handler threads append concurrently."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[dict[str, Any]] = []

    def add(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._entries.append(entry)

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


# --- Behaviours ---------------------------------------------------------------------------


def _invalid_json(handler: Handler) -> None:
    handler.send_body(200, CUT_JSON, "application/json")


def _html_error(handler: Handler) -> None:
    handler.send_body(502, PROXY_ERROR_PAGE, "text/html")


def _truncated_body(handler: Handler) -> None:
    prefix = valid_body(50)[:TRUNCATED_SENT_BYTES]  # valid-looking, long enough to cut
    handler.start_response(200, "application/json", TRUNCATED_CLAIMED_BYTES)
    handler.write_parts([prefix])


def _huge(handler: Handler) -> None:
    # No Content-Length: the body ends when the connection closes, so only a cap on the bytes
    # actually read (not a check of the header) protects the client.
    handler.start_response(200, "application/json", None)
    handler.write_parts(huge_body_parts())


def _huge_sized(handler: Handler) -> None:
    # The same body with a truthful Content-Length, which a careful client can refuse upfront.
    handler.start_response(200, "application/json", HUGE_BODY_BYTES)
    handler.write_parts(huge_body_parts())


def _trickle(handler: Handler) -> None:
    body = valid_body(handler.item_count())
    handler.start_response(200, "application/json", len(body))
    # Without NODELAY, Nagle could batch the single bytes and blur the one-per-second pacing.
    handler.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    handler.write_parts(trickle(body))


def _close_mid_body(handler: Handler) -> None:
    body = valid_body(handler.item_count())
    handler.start_response(200, "application/json", len(body))
    handler.write_parts([body[: len(body) // 2]])


def _nan_literals(handler: Handler) -> None:
    handler.send_body(200, nan_body(handler.item_count()), "application/json")


def _redirect_loop(handler: Handler) -> None:
    host = handler.headers.get("Host")
    location = f"http://{host}{handler.path}" if host else handler.path
    handler.send_body(302, b"", "application/json", {"Location": location})


def _redirect_offsite(handler: Handler) -> None:
    if handler.host_name() == OFFSITE_HOST:
        # Arrived at the "other" host: answer like a working server, so a client that
        # followed the redirect sees success and only the request record gives it away.
        handler.send_body(200, valid_body(handler.item_count()), "application/json")
        return
    port = cast(HostileServer, handler.server).server_port
    location = f"http://{OFFSITE_HOST}:{port}{handler.path}"
    handler.send_body(307, b"", "application/json", {"Location": location})


def _valid(handler: Handler) -> None:
    """'no-models' only lacks the models route; its embeddings are fine."""
    handler.send_body(200, valid_body(handler.item_count()), "application/json", close=False)


RATE_LIMIT_ERROR = b'{"error": {"message": "Rate limit reached", "type": "rate_limit"}}'
BUSY_ERROR = b'{"error": {"message": "The server is busy", "type": "server_busy"}}'
AUTH_ERROR = b'{"error": {"message": "Invalid API key", "type": "invalid_request_error"}}'
_asked = iter(range(1 << 62))  # requests seen by 'rate-limited', across connections
_busy = iter(range(1 << 62))  # and by 'briefly-busy'


def _rate_limited(handler: Handler) -> None:
    """Every other request is refused with 429 and 'Retry-After: 1'; the others are fine."""
    if next(_asked) % 2 == 0:
        handler.send_body(429, RATE_LIMIT_ERROR, "application/json", {"Retry-After": "1"})
    else:
        handler.send_body(200, valid_body(handler.item_count()), "application/json")


def _briefly_busy(handler: Handler) -> None:
    """Every other request gets a 503 without Retry-After (a brief overload); the others are
    fine."""
    if next(_busy) % 2 == 0:
        handler.send_body(503, BUSY_ERROR, "application/json")
    else:
        handler.send_body(200, valid_body(handler.item_count()), "application/json")


def _token_ids_get(status: int, body: bytes, headers: dict[str, str]) -> Behaviour:
    """Texts are answered well; token-id input gets ``status`` (a 4xx that judges nothing)."""

    def behave(handler: Handler) -> None:
        value = handler._input()
        if isinstance(value, list) and any(isinstance(item, (int, list)) for item in value):
            handler.send_body(status, body, "application/json", headers)
        else:
            handler.send_body(200, valid_body(handler.item_count()), "application/json")

    return behave


def _captive_portal(handler: Handler) -> None:
    handler.send_body(200, CAPTIVE_PAGE, "text/html; charset=utf-8", close=False)


Behaviour = Callable[["Handler"], None]
BEHAVIOURS: dict[str, Behaviour] = {
    "invalid-json": _invalid_json,
    "html-error": _html_error,
    "truncated-body": _truncated_body,
    "huge": _huge,
    "huge-sized": _huge_sized,
    "trickle": _trickle,
    "redirect-loop": _redirect_loop,
    "redirect-offsite": _redirect_offsite,
    "close-mid-body": _close_mid_body,
    "nan-literals": _nan_literals,
    "rate-limited": _rate_limited,
    "briefly-busy": _briefly_busy,
    # 4xx answers that say nothing about the request, to token-id input only
    "always-429": _token_ids_get(429, RATE_LIMIT_ERROR, {"Retry-After": "0"}),
    "always-503": _token_ids_get(503, BUSY_ERROR, {}),  # no Retry-After: the client's backoff
    "unauthorized": _token_ids_get(401, AUTH_ERROR, {}),  # a key revoked mid-run
    # Misconfigured endpoints, for the preflight: a login page answering everything, and a
    # server without GET /v1/models.
    "captive-portal": _captive_portal,
    "no-models": _valid,
}


# --- HTTP plumbing ------------------------------------------------------------------------


def split_path(path: str) -> tuple[str, str]:
    """'/huge/v1/embeddings' -> ('huge', '/v1/embeddings')."""
    behaviour, _, rest = urlsplit(path).path.lstrip("/").partition("/")
    return behaviour, "/" + rest


class HostileServer(ThreadingHTTPServer):
    daemon_threads = True
    # Otherwise server_close() would wait for every trickle to finish before SIGTERM exits.
    block_on_close = False

    def __init__(self, address: tuple[str, int]) -> None:
        self.requests_seen = RequestLog()
        super().__init__(address, Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup, which can stall without a resolver.
        socketserver.TCPServer.server_bind(self)
        host, port = self.socket.getsockname()[:2]
        self.server_name, self.server_port = str(host), int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up on a hostile response is the expected outcome, not an error.
        if not isinstance(sys.exc_info()[1], DISCONNECTED):
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive for well-behaved answers; hostile ones close
    server_version = "hostile-test-server/1"
    timeout = SOCKET_TIMEOUT_S
    request_json: Any = None

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        if os.environ.get("HOSTILE_SERVER_VERBOSE"):
            sys.stderr.write(f"{self.address_string()} - {format % args}\n")

    # Request side.

    def _dispatch(self) -> None:
        behaviour, route = split_path(self.path)
        if route != "/debug/requests":  # reading the record must not change it
            self._record()
        if not self._read_request():
            return
        if route == "/debug/requests":
            self._debug_requests()
        elif behaviour not in BEHAVIOURS:
            self._send_error(404, f"Unknown behaviour {behaviour!r}: {self.command} {self.path}")
        elif behaviour == "captive-portal":
            _captive_portal(self)
        elif route == "/v1/models" and behaviour == "no-models":
            self._send_error(404, "Not Found")
        elif route == "/v1/models":
            self._models()
        elif route == "/v1/embeddings":
            self._embeddings(behaviour)
        else:
            self._send_error(404, f"Unknown route: {self.command} {self.path}")

    def _record(self) -> None:
        entry = {
            "method": self.command,
            "path": self.path,
            "host": self.headers.get("Host"),
            "authorization": "Authorization" in self.headers,
        }
        cast(HostileServer, self.server).requests_seen.add(entry)

    def _read_request(self) -> bool:
        """Read the body (and parse it as JSON if it is); False if already answered."""
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_REQUEST_BYTES or "Transfer-Encoding" in self.headers:
            self.close_connection = True  # the unread body would poison the next request
            self._send_error(400, "Send a Content-Length of at most 16 MiB, not chunked")
            return False
        body = self.rfile.read(length) if length else b""
        try:
            self.request_json = json.loads(body) if body else None
        except ValueError:
            self.request_json = None  # not our business: the behaviour answers regardless
        return True

    def _input(self) -> object:
        return self.request_json.get("input") if isinstance(self.request_json, dict) else None

    def item_count(self) -> int:
        """How many embeddings a correct answer would hold (at least one)."""
        value = self._input()
        return len(value) if isinstance(value, list) and value else 1

    def host_name(self) -> str:
        return urlsplit(f"//{self.headers.get('Host', '')}").hostname or ""

    # Routes.

    def _debug_requests(self) -> None:
        log = cast(HostileServer, self.server).requests_seen
        if self.command == "DELETE":
            log.clear()
        self.send_body(200, json.dumps(log.snapshot()).encode(), "application/json", close=False)

    def _models(self) -> None:
        if self.command != "GET":
            self._send_error(405, f"Method {self.command} not allowed here; use GET")
            return
        model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "test"}
        body = json.dumps({"object": "list", "data": [model]}).encode()
        self.send_body(200, body, "application/json", close=False)

    def _embeddings(self, behaviour: str) -> None:
        if self.command == "POST" and isinstance(self._input(), str):
            fmt = cast(dict[str, Any], self.request_json).get("encoding_format")
            self.send_body(200, valid_body(1, fmt), "application/json", close=False)
            return
        self.close_connection = True
        BEHAVIOURS[behaviour](self)

    # Response side.

    def _send_error(self, status: int, message: str) -> None:
        self.send_body(status, error_body(message), "application/json", close=False)

    def start_response(self, status: int, content_type: str, length: int | None) -> None:
        """Status line and headers; ``length`` is whatever we claim, true or not."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is not None:
            self.send_header("Content-Length", str(length))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()

    def write_parts(self, parts: Iterable[bytes]) -> None:
        """Write as fast as the client reads; stop silently when it goes away."""
        try:
            for part in parts:
                self.wfile.write(part)
        except DISCONNECTED:
            self.close_connection = True

    def send_body(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
        *,
        close: bool = True,
    ) -> None:
        """A complete response with a truthful Content-Length."""
        self.close_connection = self.close_connection or close
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.write_parts([body])


# --- Entry points -------------------------------------------------------------------------


def announced_host(host: str) -> str:
    """The address a client should use: a wildcard bind is reachable on loopback."""
    return "127.0.0.1" if host in ("", "0.0.0.0") else host


def serve(host: str, port: int) -> None:
    """Listen, announce the URL on stdout, serve until SIGTERM/SIGINT."""
    server = HostileServer((host, port))
    if threading.current_thread() is threading.main_thread():

        def stop(_signum: int, _frame: object) -> None:
            # shutdown() blocks until serve_forever exits, so it must run on another thread.
            threading.Thread(target=server.shutdown, daemon=True).start()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
    print(f"LISTENING http://{announced_host(host)}:{server.server_port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1", help="0.0.0.0 for redirect-offsite")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    serve(args.host, args.port)


if __name__ == "__main__":
    main()
