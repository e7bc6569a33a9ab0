"""The frontend's faults: what each does at the frontend's hook points (validating like a lax
server, reading an unknown encoding_format, errors as 500, its own answer or reading of a body
before validation, its taking of a validated request, and a route's state between requests).
The frontend looks a request's fault up in these tables; a fault not in a table leaves that
step as a correct server does it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import orjson
from starlette.requests import Request
from starlette.responses import Response

from conformance.server import transports
from conformance.server.api import ApiError, EmbeddingsRequest, ModelInfo
from conformance.server.faults import DECODE_SLOTS, HUGE_TOKENS, POISONING_TOKENS, FaultName
from conformance.server.responses import error_body, json_response
from conformance.server.route_state import Rewrite, RouteState

CROSS_TALK_WAIT = 2.0  # the cross-talk fault's longest wait for another answer to land
BUSY_AFTER_REJECTION = 3  # the 503-after-rejection fault's 503s after each rejected request
NULLABLE = ("encoding_format", "dimensions", "user")  # what the null-refused fault crashes on


def empty_answer(model: str) -> bytes:
    """The answer to no inputs: no vectors, no tokens."""
    usage = {"prompt_tokens": 0, "total_tokens": 0}
    return orjson.dumps({"object": "list", "data": [], "model": model, "usage": usage})


def _plain_text(request: Request) -> bool:
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "text/plain"


def _json_object(body: bytes) -> dict[str, Any]:
    """The body's JSON object, for a fault to look at ({} when it is none)."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
    return document if isinstance(document, dict) else {}


def _spelled_dimensions(body: bytes) -> bool:
    """'dimensions' given as a string or a boolean (what the coerced-then-ignored fault drops)."""
    return isinstance(_json_object(body).get("dimensions"), (str, bool))


def _null_optional(body: bytes) -> bool:
    """An optional field sent as null (what the null-refused fault crashes on)."""
    document = _json_object(body)
    return any(key in document and document[key] is None for key in NULLABLE)


def _empty_input(body: bytes) -> bool:
    return _json_object(body).get("input") == []


# Validating like a lax server (as --lenient)
LAX_FAULTS: frozenset[FaultName] = frozenset({"coerced-then-ignored", "plain-text-as-input"})
# What an unknown encoding_format ('unknown', '', 123) is read as, instead of a 400
UNKNOWN_FORMAT: dict[FaultName, str] = {
    "unknown-format-as-float": "float",
    "unknown-format-as-base64": "base64",
}
# Validation errors (400) surfacing as HTTP 500
ERRORS_AS_500: frozenset[FaultName] = frozenset({"500-on-bad-input"})


def _crash_on_null(request: Request, body: bytes, model: str) -> Response | None:
    if not _null_optional(body):
        return None
    message = "Internal Server Error: 'NoneType' object has no attribute 'lower'"
    return json_response(error_body(500, message), 500)


def _empty_input_answered(request: Request, body: bytes, model: str) -> Response | None:
    return json_response(empty_answer(model)) if _empty_input(body) else None


def _plain_text_embedded(request: Request, body: bytes, model: str) -> EmbeddingsRequest | None:
    """A text/plain body's raw text (the JSON document itself) taken as the one input."""
    if not _plain_text(request):
        return None
    return EmbeddingsRequest([body.decode("utf-8", "replace")], "float", None)


# Before the body is validated, called with the request, its body and the served model's name:
# the fault's own answer (a Response) or reading of the body (an EmbeddingsRequest), or None
BEFORE_VALIDATION: dict[
    FaultName, Callable[[Request, bytes, str], EmbeddingsRequest | Response | None]
] = {
    "null-refused": _crash_on_null,
    "empty-input-200": _empty_input_answered,
    "plain-text-as-input": _plain_text_embedded,
}


def _spelled_dimensions_dropped(
    parsed: EmbeddingsRequest, body: bytes, model: ModelInfo
) -> EmbeddingsRequest:
    """'32' read as 32 (the lax validator), then dropped: full-length vectors."""
    return replace(parsed, dimensions=None) if _spelled_dimensions(body) else parsed


def _token_ids_refused(
    parsed: EmbeddingsRequest, body: bytes, model: ModelInfo
) -> EmbeddingsRequest:
    if isinstance(parsed.inputs[0], list):
        raise ApiError(400, "token ids are not supported", "input")
    return parsed


def _decode_fails_past_its_slots(
    parsed: EmbeddingsRequest, body: bytes, model: ModelInfo
) -> EmbeddingsRequest:
    if len(parsed.inputs) > DECODE_SLOTS:
        raise ApiError(500, "llama_decode returned -1")
    return parsed


def _native_dimensions_refused(
    parsed: EmbeddingsRequest, body: bytes, model: ModelInfo
) -> EmbeddingsRequest:
    """A range check off by one: the model's own size is out of it."""
    if parsed.dimensions == model.dimension:
        message = f"dimensions must be smaller than {model.dimension}"
        raise ApiError(400, message, "dimensions")
    return parsed


def _user_refused(parsed: EmbeddingsRequest, body: bytes, model: ModelInfo) -> EmbeddingsRequest:
    if "user" in _json_object(body):  # a schema that forbids extras
        raise ApiError(400, "user: Extra inputs are not permitted", "user", "extra_forbidden")
    return parsed


# After the body is validated, called with the request, its body and the route's model: the
# request as the fault takes it on, or an ApiError for a shape a correct server answers
AFTER_VALIDATION: dict[
    FaultName, Callable[[EmbeddingsRequest, bytes, ModelInfo], EmbeddingsRequest]
] = {
    "coerced-then-ignored": _spelled_dimensions_dropped,
    "token-ids-rejected": _token_ids_refused,
    "500-past-256-inputs": _decode_fails_past_its_slots,
    "native-dimensions-refused": _native_dimensions_refused,
    "user-refused": _user_refused,
}


class BusyAfterRejection(RouteState):
    """503-after-rejection: after a 4xx, the next BUSY_AFTER_REJECTION requests get a 503."""

    def __init__(self) -> None:
        self.owed = 0  # 503s still owed

    async def serve(self, embed: Callable[[], Awaitable[Response]]) -> Response:
        if self.owed > 0:
            self.owed -= 1
            message = "Service temporarily unavailable: the server is busy, retry"
            return json_response(error_body(503, message, None, "server_busy"), 503)
        answer = await embed()
        if 400 <= answer.status_code < 500:
            self.owed = BUSY_AFTER_REJECTION
        return answer


class MergedBatchIndex(RouteState):
    """merged-batch-index: 'index' counted from the inputs of the requests in flight before."""

    def __init__(self) -> None:
        self.inputs_in_flight = 0

    def sent(self, inputs: int) -> int:
        first_index = self.inputs_in_flight
        self.inputs_in_flight += inputs
        return first_index

    def returned(self, inputs: int) -> None:
        self.inputs_in_flight -= inputs


class ZerosAfterLongRequest(RouteState):
    """zeros-after-long-request: zeros in every answer after one of more than
    POISONING_TOKENS tokens (a buffer sized for short requests overflowed)."""

    def __init__(self) -> None:
        self.poisoned = False

    def rows(self, prompt_tokens: int) -> Rewrite | None:
        return np.zeros_like if self.poisoned else None

    async def answered(self, body: bytes, prompt_tokens: int) -> bytes:
        if prompt_tokens > POISONING_TOKENS:
            self.poisoned = True  # from the next answer on
        return body


class StaleAfterHugeRequest(RouteState):
    """stale-after-huge-request: once an answer of more than HUGE_TOKENS tokens was sent
    (right), every later answer's rows are its rows (a reused buffer)."""

    def __init__(self) -> None:
        self.kept: transports.Float32Matrix | None = None  # the huge answer's rows

    def rows(self, prompt_tokens: int) -> Rewrite | None:
        if self.kept is not None:
            return partial(_reused_buffer, self.kept)
        if prompt_tokens > HUGE_TOKENS:
            return self._keep
        return None

    def _keep(self, matrix: transports.Float32Matrix) -> transports.Float32Matrix:
        self.kept = matrix.copy()
        return matrix


def _reused_buffer(
    kept: transports.Float32Matrix, matrix: transports.Float32Matrix
) -> transports.Float32Matrix:
    """An answer read from the buffer a huge answer filled: row i is that answer's row i
    (again from its first past its last), as much of it as this answer's width holds."""
    rows = np.zeros_like(matrix)
    width = min(matrix.shape[1], kept.shape[1])
    rows[:, :width] = kept[np.arange(len(matrix)) % len(kept), :width]
    return rows


class CrossTalk(RouteState):
    """cross-talk: every answer is parked in one shared slot; while other requests are still
    being served, it waits for one of them to overwrite the slot, then returns whatever is
    there. A request served alone gets its own answer: only concurrency shows the bug."""

    def __init__(self) -> None:
        self.slot = b""  # the one buffer for everybody
        self.in_flight = 0  # requests waiting for a worker

    def sent(self, inputs: int) -> int:
        self.in_flight += 1
        return 0

    def returned(self, inputs: int) -> None:
        self.in_flight -= 1

    async def answered(self, body: bytes, prompt_tokens: int) -> bytes:
        self.slot = body
        deadline = time.monotonic() + CROSS_TALK_WAIT
        while self.slot is body and self.in_flight and time.monotonic() < deadline:
            await asyncio.sleep(0.002)
        return self.slot


# The stateful faults: each route serving one keeps its own state
ROUTE_STATES: dict[FaultName, Callable[[], RouteState]] = {
    "503-after-rejection": BusyAfterRejection,
    "merged-batch-index": MergedBatchIndex,
    "zeros-after-long-request": ZerosAfterLongRequest,
    "stale-after-huge-request": StaleAfterHugeRequest,
    "cross-talk": CrossTalk,
}
