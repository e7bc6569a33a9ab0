"""The HTTP frontend (Starlette on uvicorn): OpenAI-compatible routes over the worker pool."""

from __future__ import annotations

import asyncio
import hmac
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from conformance import __version__
from conformance.server import transports
from conformance.server.api import (
    ApiError,
    EmbeddingsRequest,
    ModelInfo,
    check_content_type,
    parse_embeddings_request,
    parse_tokenize_request,
)
from conformance.server.faults import (
    DECODE_SLOTS,
    FAULTS,
    HUGE_TOKENS,
    LEAKS_SHARED_MEMORY,
    POISONING_TOKENS,
    FaultName,
    hook_of,
    is_fault_name,
)
from conformance.server.pool import WorkerGone, WorkerPool, WorkerReply
from conformance.server.responses import BASE64_REWRITES, embeddings_body, error_body

JSON = "application/json"
CROSS_TALK_WAIT = 2.0  # the cross-talk fault's longest wait for another answer to land
BUSY_AFTER_REJECTION = 3  # the 503-after-rejection fault's 503s after each rejected request
NULLABLE = ("encoding_format", "dimensions", "user")  # what the null-refused fault crashes on
# What a route's state does to an answer's rows (zeros-after-long-request and the like)
Rewrite = Callable[[transports.Float32Matrix], transports.Float32Matrix]


@dataclass(frozen=True)
class FrontendConfig:
    api_key: str | None
    fault: FaultName | None
    announce: str | None  # printed once the workers are ready (e.g. the URL)
    served_model_name: str | None = None  # the name the API answers to (default: the model's)
    # a lax validator: text/plain, any model name, '32' read as 32, an unknown
    # encoding_format read as none
    lenient: bool = False
    max_model_len: int | None = None  # a context enforced the vLLM way: longer input gets 400
    fault_routes: bool = False  # also serve each shareable fault under /faults/<name>/...


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type=JSON)


def api_error(error: ApiError, fault: FaultName | None) -> Response:
    status = error.status
    if status == 400 and fault in ERRORS_AS_500:
        return json_response(error_body(500, "Internal Server Error"), 500)
    return json_response(error_body(status, error.message, error.param, error.code), status)


class Frontend:
    def __init__(self, pool: WorkerPool, config: FrontendConfig) -> None:
        self.pool, self.config = pool, config
        # A stateful fault's state: one per fault, which is served on one route
        self._states = {name: state() for name, state in ROUTE_STATES.items()}

    @property
    def model(self) -> ModelInfo:
        info = self.pool.model_info
        assert info is not None
        served = self.config.served_model_name
        return info if served is None else replace(info, name=served)

    def model_for(self, fault: FaultName | None) -> ModelInfo:
        """The model as the fault's route shows it (a fault may change its dimension or
        context), the served model itself for the server's own routes."""
        if fault is None or fault == self.config.fault:
            return self.model
        facts = self.pool.fault_facts[fault]
        return replace(self.model, dimension=facts["dimension"], max_tokens=facts["max_tokens"])

    def fault_of(self, request: Request) -> FaultName | None:
        """The fault a request is served with: its /faults/<name> route's, else the server's.
        An unknown name is a 404 (HTTPException, answered as an OpenAI error)."""
        routed: str | None = request.path_params.get("fault")
        if routed is None:
            return self.config.fault
        if not is_fault_name(routed) or routed not in self.pool.fault_facts:
            raise HTTPException(404, f"no fault route {routed!r} (GET /faults lists them)")
        return routed

    def state_of(self, fault: FaultName | None) -> RouteState:
        """The route's state: its stateful fault's, else one that remembers nothing."""
        return hook_of(self._states, fault) or STATELESS

    def _authorized(self, request: Request) -> bool:
        if not self.config.api_key:
            return True
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {self.config.api_key}".encode())

    async def embeddings(self, request: Request) -> Response:
        fault = self.fault_of(request)
        state = self.state_of(fault)
        return await state.serve(partial(self._embeddings, request, fault, state))

    async def _embeddings(
        self, request: Request, fault: FaultName | None, state: RouteState
    ) -> Response:
        parsed = await self._parse_embeddings(request, fault)
        if isinstance(parsed, Response):
            return parsed
        refused = await self._past_the_context(parsed, fault)
        if refused is not None:
            return refused
        tokens = isinstance(parsed.inputs[0], list)
        key = "ids" if tokens else "texts"
        header = {"op": "embed", key: parsed.inputs, "dimensions": parsed.dimensions}
        first_index = state.sent(len(parsed.inputs))
        try:
            reply = await self._ask({**header, "fault": fault})
        finally:
            state.returned(len(parsed.inputs))
        if isinstance(reply, Response):
            return reply
        prompt_tokens = reply.header["prompt_tokens"]
        try:
            rewrite = state.rows(prompt_tokens)
            answer = self._render(reply, parsed.encoding_format, fault, rewrite, first_index)
        except transports.TransportError as exc:
            return json_response(error_body(500, f"bad worker answer: {exc}"), 500)
        return json_response(await state.answered(answer, prompt_tokens))

    def lenient(self, fault: FaultName | None) -> bool:
        """Validating like a lax server: --lenient, or a fault of one."""
        return self.config.lenient or fault in LAX_FAULTS

    def context(self, fault: FaultName | None) -> int:
        """The context the API states: --max-model-len, else the model's own."""
        return self.config.max_model_len or self.model_for(fault).max_tokens

    async def _past_the_context(
        self, parsed: EmbeddingsRequest, fault: FaultName | None
    ) -> Response | None:
        """With --max-model-len, an input longer than it is refused with a 400, as vLLM does
        (the engine would truncate it silently); None when every input fits."""
        limit = self.config.max_model_len
        if limit is None:
            return None
        for item in parsed.inputs:
            if isinstance(item, list):
                count = len(item)
            else:
                reply = await self._ask({"op": "tokenize", "text": item, "special": True})
                if isinstance(reply, Response):
                    return reply
                count = len(reply.header["tokens"])
            if count > limit:
                message = (
                    f"This model's maximum context length is {limit} tokens. However, your "
                    f"request has an input of {count} tokens."
                )
                return api_error(ApiError(400, message, "input"), fault)
        return None

    async def _parse_embeddings(
        self, request: Request, fault: FaultName | None
    ) -> EmbeddingsRequest | Response:
        """The validated request, or the error answer (shaped by the fault, if any)."""
        try:
            self._check_request(request, fault)
            body = await request.body()
            before = hook_of(BEFORE_VALIDATION, fault)
            own = before(request, body, self.model.name) if before is not None else None
            if own is not None:  # the fault's own answer, or its own reading of the body
                return own
            model = self.model_for(fault)
            unknown_format = hook_of(UNKNOWN_FORMAT, fault)
            parsed = parse_embeddings_request(body, model, self.lenient(fault), unknown_format)
            after = hook_of(AFTER_VALIDATION, fault)
            if after is not None:
                parsed = after(parsed, body, model)
        except ApiError as error:
            return api_error(error, fault)
        return parsed

    def _check_request(self, request: Request, fault: FaultName | None) -> None:
        if not self._authorized(request):
            raise ApiError(401, "Incorrect API key provided", None, "invalid_api_key")
        check_content_type(request.headers.get("content-type"), self.lenient(fault))

    async def _ask(self, header: dict[str, Any]) -> WorkerReply | Response:
        try:
            reply = await self.pool.request(header)
        except WorkerGone as exc:
            message = f"{exc}; retry"
            return json_response(error_body(503, message, None, "worker_unavailable"), 503)
        if not reply.header.get("ok"):
            return json_response(error_body(500, reply.header.get("message", "worker error")), 500)
        return reply

    def _render(
        self,
        reply: WorkerReply,
        encoding_format: str,
        fault: FaultName | None,
        rewrite: Rewrite | None = None,
        first_index: int = 0,
    ) -> bytes:
        header = reply.header
        items: list[bytes] | None = None
        matrix: transports.Float32Matrix | None
        if header["transport"] == "shm":
            handle = transports.validate_handle(header["shm"], self.pool.prefix)
            matrix = transports.read_segment(handle, unlink=fault not in LEAKS_SHARED_MEMORY)
        else:
            items = reply.frames
            rewritten = fault in BASE64_REWRITES
            needs_matrix = rewrite is not None or encoding_format == "float" or rewritten
            matrix = transports.decode_items(items, header["dim"]) if needs_matrix else None
        if rewrite is not None:  # a route whose state changes its answers
            assert matrix is not None
            matrix, items = rewrite(matrix), None
        return embeddings_body(
            model=self.model.name,
            encoding_format=encoding_format,
            rows=header["rows"],
            matrix=matrix,
            items=items,
            prompt_tokens=header["prompt_tokens"],
            fault=fault,
            first_index=first_index,
        )

    async def tokenize(self, request: Request) -> Response:
        fault = self.fault_of(request)
        try:
            self._check_request(request, fault)
            prompt, special = parse_tokenize_request(await request.body(), self.model)
        except ApiError as error:
            return api_error(error, fault)
        reply = await self._ask({"op": "tokenize", "text": prompt, "special": special})
        if isinstance(reply, Response):
            return reply
        tokens = reply.header["tokens"]
        document = {"count": len(tokens), "max_model_len": self.context(fault), "tokens": tokens}
        return json_response(orjson.dumps(document))

    async def models(self, request: Request) -> Response:
        fault = self.fault_of(request)
        if not self._authorized(request):
            return api_error(
                ApiError(401, "Incorrect API key provided", None, "invalid_api_key"), None
            )
        model = {
            "id": self.model.name,
            "object": "model",
            "created": 0,
            "owned_by": "embedding-conformance",
            "max_model_len": self.context(fault),  # as vLLM lists it
        }
        return json_response(orjson.dumps({"object": "list", "data": [model]}))

    async def faults(self, request: Request) -> Response:
        """The /faults routes: each fault this server can plant in one request, and its bug."""
        listing = [
            {"name": name, "layer": FAULTS[name].layer, "mirrors": FAULTS[name].mirrors}
            for name in sorted(self.pool.fault_facts)
        ]
        return json_response(orjson.dumps({"object": "list", "data": listing}))

    async def version(self, request: Request) -> Response:
        """As vLLM's GET /version: what a client labels its runs with."""
        return json_response(orjson.dumps({"version": __version__}))

    async def health(self, request: Request) -> Response:
        """Liveness plus what an operator (or a test) needs to see the machinery."""
        workers = [
            {
                "identity": w.identity.decode(),
                "pid": w.process.pid if w.process else None,
                "transport": "shm" if w.shm and self.pool.transport != "base64" else "base64",
            }
            for w in self.pool.workers.values()
            if w.ready
        ]
        document = {"status": "ok", "workers": workers, "shm_prefix": self.pool.prefix}
        return json_response(orjson.dumps(document))


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


# --- The frontend's faults, by hook point: each table says what a fault does there ---

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


class RouteState:
    """What a route remembers between its embeddings requests, as hooks into serving them. This
    one remembers nothing (every route but a stateful fault's); each stateful fault overrides
    the hooks it needs."""

    async def serve(self, embed: Callable[[], Awaitable[Response]]) -> Response:
        """The answer to the request that ``embed`` answers."""
        return await embed()

    def sent(self, inputs: int) -> int:
        """A request of ``inputs`` inputs goes to a worker: the index of its first row."""
        return 0

    def returned(self, inputs: int) -> None:
        """That request's worker answered (or was lost)."""

    def rows(self, prompt_tokens: int) -> Rewrite | None:
        """What the state does to the rows of an answer of ``prompt_tokens`` (None: nothing)."""
        return None

    async def answered(self, body: bytes, prompt_tokens: int) -> bytes:
        """The body sent for an answer rendered as ``body``."""
        return body


STATELESS = RouteState()


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


async def http_error(request: Request, exc: Exception) -> Response:
    """Unknown routes and methods answer with the OpenAI envelope too."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "Internal Server Error"
    return json_response(error_body(status, str(detail)), status)


def build_app(pool: WorkerPool, config: FrontendConfig) -> Starlette:
    frontend = Frontend(pool, config)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # The pool was started before the app (main.run_server): a start that fails, or is
        # stopped by a signal, never gets here.
        if config.announce:
            print(config.announce, flush=True)
        try:
            yield
        finally:
            await pool.stop()
            print("embedding-conformance server stopped", file=sys.stderr, flush=True)

    routes = [
        Route("/v1/embeddings", frontend.embeddings, methods=["POST"]),
        Route("/v1/models", frontend.models, methods=["GET"]),
        Route("/tokenize", frontend.tokenize, methods=["POST"]),
        Route("/health", frontend.health, methods=["GET"]),
        Route("/version", frontend.version, methods=["GET"]),
    ]
    if config.fault_routes:  # mutation testing: one server start for the shareable faults
        routes += [
            Route("/faults", frontend.faults, methods=["GET"]),
            Route("/faults/{fault}/v1/embeddings", frontend.embeddings, methods=["POST"]),
            Route("/faults/{fault}/v1/models", frontend.models, methods=["GET"]),
            Route("/faults/{fault}/tokenize", frontend.tokenize, methods=["POST"]),
            Route("/faults/{fault}/version", frontend.version, methods=["GET"]),
        ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={HTTPException: http_error, Exception: http_error},
    )
