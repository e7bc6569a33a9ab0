"""What a bench times: an endpoint (any OpenAI-compatible URL) or the in-process forward pass.

A target's ``sender()`` is one client (an endpoint: one kept-alive connection, the standard
library's, so little Python runs per call); concurrent load opens one per worker. Only sending
and reading the whole answer is timed; decoding it into vectors is not (the client's parsing is
not billed to the server).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from conformance.client import parse_endpoint
from conformance.client.decode import decode_response
from conformance.wire import Matrix


@dataclass(frozen=True)
class Reply:
    status: int  # HTTP status; 0 when no answer came
    body: bytes
    vectors: Matrix | None = None  # set directly by the in-process target


Sender = Callable[[list[str]], Reply]
# What a kept-alive connection that the server has closed raises on the next request.
STALE = (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected)


@dataclass(frozen=True)
class Target:
    name: str
    sender: Callable[[], Sender]  # a new client
    concurrent: bool = True  # can several clients load it at once

    def decode(self, reply: Reply) -> tuple[Matrix | None, str]:
        return decode_reply(reply)


def decode_reply(reply: Reply) -> tuple[Matrix | None, str]:
    """The answer's vectors, or None and why not (a status, a body that is no envelope)."""
    if reply.vectors is not None:
        return reply.vectors, ""
    if reply.status != 200:
        return None, f"HTTP {reply.status}: {reply.body[:120]!r}"
    try:
        return decode_response(json.loads(reply.body)).matrix(), ""
    except (ValueError, TypeError, AttributeError) as exc:
        return None, f"not an embeddings envelope ({exc})"


def endpoint(
    url: str, model: str, encoding: str, api_key: str | None = None, timeout: float = 120.0
) -> Target:
    embeddings = parse_endpoint(url).embeddings_url
    parts = urlsplit(embeddings)
    connect: Any = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"

    def sender() -> Sender:
        connection = connect(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)

        def exchange(body: str) -> Reply:
            connection.request("POST", parts.path, body, headers)
            response = connection.getresponse()
            return Reply(response.status, response.read())

        def send(batch: list[str]) -> Reply:
            body = json.dumps({"model": model, "input": batch, "encoding_format": encoding})
            for attempt in (1, 2):
                try:
                    return exchange(body)
                except STALE:  # the server closed the kept-alive connection while it was idle
                    connection.close()  # (uvicorn after 5 s): send again on a new one, once
                    if attempt == 2:
                        return Reply(0, b"the connection was closed twice")
                except (OSError, http.client.HTTPException) as exc:
                    connection.close()  # reconnects on the next request
                    return Reply(0, str(exc).encode())
            raise AssertionError("unreachable")

        return send

    return Target(url, sender)


def in_process(encode: Callable[[list[str]], Any]) -> Target:
    """The bare forward pass (``encode``: a batch of texts to a matrix), in this process."""

    def sender() -> Sender:
        def send(batch: list[str]) -> Reply:
            return Reply(200, b"", np.asarray(encode(batch), dtype=np.float64))

        return send

    return Target("in-process", sender, concurrent=False)
