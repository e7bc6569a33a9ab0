"""The HTTP frontend (Starlette on uvicorn): OpenAI-compatible routes over the worker pool."""

from __future__ import annotations

import asyncio
import hmac
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
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
from conformance.server.faults import DECODE_SLOTS, FAULTS, HUGE_TOKENS, POISONING_TOKENS
from conformance.server.pool import WorkerGone, WorkerPool, WorkerReply
from conformance.server.responses import embeddings_body, error_body

JSON = "application/json"
LAX_FAULTS = ("coerced-then-ignored", "plain-text-as-input")  # faults of a lenient server
CROSS_TALK_WAIT = 2.0  # the cross-talk fault's longest wait for another answer to land
BUSY_AFTER_REJECTION = 3  # the 503-after-rejection fault's 503s after each rejected request
NULLABLE = ("encoding_format", "dimensions", "user")  # what the null-refused fault crashes on
ZEROS = "zeros-after-long-request"  # a fault whose state lives in the frontend, per route
STALE = "stale-after-huge-request"  # another, whose state is a huge answer's rows
# What an unknown encoding_format ('unknown', '', 123) is answered with, per fault
UNKNOWN_FORMAT = {"unknown-format-as-float": "float", "unknown-format-as-base64": "base64"}
# What a route's state does to an answer's rows (ZEROS, STALE)
Rewrite = Callable[[transports.Float32Matrix], transports.Float32Matrix]


@dataclass(frozen=True)
class FrontendConfig:
    api_key: str | None
    fault: str | None
    announce: str | None  # printed once the workers are ready (e.g. the URL)
    served_model_name: str | None = None  # the name the API answers to (default: the model's)
    # a lax validator: text/plain, any model name, '32' read as 32, an unknown
    # encoding_format read as none
    lenient: bool = False
    max_model_len: int | None = None  # a context enforced the vLLM way: longer input gets 400
    fault_routes: bool = False  # also serve each shareable fault under /faults/<name>/...


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type=JSON)


def api_error(error: ApiError, fault: str | None) -> Response:
    status = error.status
    if fault == "500-on-bad-input" and status == 400:
        return json_response(error_body(500, "Internal Server Error"), 500)
    return json_response(error_body(status, error.message, error.param, error.code), status)


class Frontend:
    def __init__(self, pool: WorkerPool, config: FrontendConfig) -> None:
        self.pool, self.config = pool, config
        self._shared_slot = b""  # the cross-talk fault's one buffer for everybody
        self._in_flight: Counter[str | None] = Counter()  # per fault: waiting for a worker
        self._inputs_in_flight: Counter[str | None] = Counter()  # and their inputs
        self._busy = 0  # the 503-after-rejection fault: 503s still owed
        self._poisoned: set[str] = set()  # the routes a long request poisoned (ZEROS)
        self._stale: dict[str, transports.Float32Matrix] = {}  # per route, the huge answer (STALE)

    @property
    def model(self) -> ModelInfo:
        info = self.pool.model_info
        assert info is not None
        served = self.config.served_model_name
        return info if served is None else replace(info, name=served)

    def model_for(self, fault: str | None) -> ModelInfo:
        """The model as the fault's route shows it (a fault may change its dimension or
        context), the served model itself for the server's own routes."""
        if fault is None or fault == self.config.fault:
            return self.model
        facts = self.pool.fault_facts[fault]
        return replace(self.model, dimension=facts["dimension"], max_tokens=facts["max_tokens"])

    def fault_of(self, request: Request) -> str | None:
        """The fault a request is served with: its /faults/<name> route's, else the server's.
        An unknown name is a 404 (HTTPException, answered as an OpenAI error)."""
        routed: str | None = request.path_params.get("fault")
        if routed is None:
            return self.config.fault
        if routed not in self.pool.fault_facts:
            raise HTTPException(404, f"no fault route {routed!r} (GET /faults lists them)")
        return routed

    def _authorized(self, request: Request) -> bool:
        if not self.config.api_key:
            return True
        given = request.headers.get("authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {self.config.api_key}".encode())

    async def embeddings(self, request: Request) -> Response:
        fault = self.fault_of(request)
        if fault == "503-after-rejection":
            return await self._busy_after_rejection(request, fault)
        return await self._embeddings(request, fault)

    async def _busy_after_rejection(self, request: Request, fault: str) -> Response:
        """The 503-after-rejection fault: after a 4xx, the next requests get a 503."""
        if self._busy > 0:
            self._busy -= 1
            message = "Service temporarily unavailable: the server is busy, retry"
            return json_response(error_body(503, message, None, "server_busy"), 503)
        answer = await self._embeddings(request, fault)
        if 400 <= answer.status_code < 500:
            self._busy = BUSY_AFTER_REJECTION
        return answer

    async def _embeddings(self, request: Request, fault: str | None) -> Response:
        parsed = await self._parse_embeddings(request, fault)
        if isinstance(parsed, Response):
            return parsed
        refused = await self._past_the_context(parsed, fault)
        if refused is not None:
            return refused
        tokens = isinstance(parsed.inputs[0], list)
        key = "ids" if tokens else "texts"
        header = {"op": "embed", key: parsed.inputs, "dimensions": parsed.dimensions}
        # merged-batch-index: counted from the inputs of the requests in flight before it
        first_index = self._inputs_in_flight[fault] if fault == "merged-batch-index" else 0
        self._in_flight[fault] += 1
        self._inputs_in_flight[fault] += len(parsed.inputs)
        try:
            reply = await self._ask({**header, "fault": fault})
        finally:
            self._in_flight[fault] -= 1
            self._inputs_in_flight[fault] -= len(parsed.inputs)
        if isinstance(reply, Response):
            return reply
        try:
            rewrite = self._route_state(fault, reply.header["prompt_tokens"])
            answer = self._render(reply, parsed.encoding_format, fault, rewrite, first_index)
        except transports.TransportError as exc:
            return json_response(error_body(500, f"bad worker answer: {exc}"), 500)
        if fault == ZEROS and reply.header["prompt_tokens"] > POISONING_TOKENS:
            self._poisoned.add(fault)  # from the next answer of this route on
        if fault == "cross-talk":
            answer = await self._cross_talk(answer)
        return json_response(answer)

    def _route_state(self, fault: str | None, prompt_tokens: int) -> Rewrite | None:
        """What the route's state does to this answer's rows (None: nothing). ZEROS: zeros once
        poisoned. STALE: the rows of the route's first huge answer, once there was one; that
        answer itself is right, its rows kept."""
        if fault == ZEROS and fault in self._poisoned:
            return np.zeros_like
        if fault != STALE:
            return None
        if fault in self._stale:
            return partial(_reused_buffer, self._stale[fault])
        if prompt_tokens > HUGE_TOKENS:
            return partial(self._keep_huge, fault)
        return None

    def _keep_huge(self, route: str, matrix: transports.Float32Matrix) -> transports.Float32Matrix:
        self._stale[route] = matrix.copy()
        return matrix

    def lenient(self, fault: str | None) -> bool:
        """Validating like a lax server: --lenient, or a fault of one."""
        return self.config.lenient or fault in LAX_FAULTS

    def context(self, fault: str | None) -> int:
        """The context the API states: --max-model-len, else the model's own."""
        return self.config.max_model_len or self.model_for(fault).max_tokens

    async def _past_the_context(
        self, parsed: EmbeddingsRequest, fault: str | None
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
        self, request: Request, fault: str | None
    ) -> EmbeddingsRequest | Response:
        """The validated request, or the error answer (shaped by the fault, if any)."""
        try:
            self._check_request(request, fault)
            body = await request.body()
            if fault == "null-refused" and _null_optional(body):
                message = "Internal Server Error: 'NoneType' object has no attribute 'lower'"
                return json_response(error_body(500, message), 500)
            if fault == "empty-input-200" and _empty_input(body):
                return json_response(empty_answer(self.model.name))
            if fault == "plain-text-as-input" and _plain_text(request):
                return EmbeddingsRequest([body.decode("utf-8", "replace")], "float", None)
            parsed = parse_embeddings_request(
                body, self.model_for(fault), self.lenient(fault), UNKNOWN_FORMAT.get(fault or "")
            )
            if fault == "coerced-then-ignored" and _spelled_dimensions(body):
                parsed = replace(parsed, dimensions=None)
            if fault == "token-ids-rejected" and isinstance(parsed.inputs[0], list):
                raise ApiError(400, "token ids are not supported", "input")
            _refuse_shape(parsed, body, fault, self.model_for(fault).dimension)
        except ApiError as error:
            return api_error(error, fault)
        return parsed

    def _check_request(self, request: Request, fault: str | None) -> None:
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
        fault: str | None,
        rewrite: Rewrite | None = None,
        first_index: int = 0,
    ) -> bytes:
        header = reply.header
        items: list[bytes] | None = None
        matrix: transports.Float32Matrix | None
        if header["transport"] == "shm":
            handle = transports.validate_handle(header["shm"], self.pool.prefix)
            matrix = transports.read_segment(handle, unlink=fault != "leak-shm")
        else:
            items = reply.frames
            rewritten = fault in ("base64-ignored", "big-endian-base64", "float16-base64")
            needs_matrix = rewrite is not None or encoding_format == "float" or rewritten
            matrix = transports.decode_items(items, header["dim"]) if needs_matrix else None
        if rewrite is not None:  # a route whose state (ZEROS, STALE) changes its answers
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

    async def _cross_talk(self, body: bytes) -> bytes:
        """Every answer is parked in one shared slot; while other requests are still being
        served, it waits for one of them to overwrite the slot, then returns whatever is there.
        A request served alone gets its own answer: only concurrency shows the bug."""
        self._shared_slot = body
        deadline = time.monotonic() + CROSS_TALK_WAIT
        while (
            self._shared_slot is body
            and self._in_flight["cross-talk"]
            and time.monotonic() < deadline
        ):
            await asyncio.sleep(0.002)
        return self._shared_slot

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


def _refuse_shape(parsed: EmbeddingsRequest, body: bytes, fault: str | None, native: int) -> None:
    """The faults that refuse a request shape a correct server answers (an ApiError)."""
    if fault == "500-past-256-inputs" and len(parsed.inputs) > DECODE_SLOTS:
        raise ApiError(500, "llama_decode returned -1")
    if fault == "native-dimensions-refused" and parsed.dimensions == native:
        raise ApiError(400, f"dimensions must be smaller than {native}", "dimensions")
    if fault == "user-refused" and "user" in _json_object(body):  # a schema that forbids extras
        raise ApiError(400, "user: Extra inputs are not permitted", "user", "extra_forbidden")


def _reused_buffer(
    kept: transports.Float32Matrix, matrix: transports.Float32Matrix
) -> transports.Float32Matrix:
    """An answer read from the buffer a huge answer filled: row i is that answer's row i
    (again from its first past its last), as much of it as this answer's width holds."""
    rows = np.zeros_like(matrix)
    width = min(matrix.shape[1], kept.shape[1])
    rows[:, :width] = kept[np.arange(len(matrix)) % len(kept), :width]
    return rows


async def http_error(request: Request, exc: Exception) -> Response:
    """Unknown routes and methods answer with the OpenAI envelope too."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "Internal Server Error"
    return json_response(error_body(status, str(detail)), status)


def build_app(pool: WorkerPool, config: FrontendConfig) -> Starlette:
    frontend = Frontend(pool, config)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await pool.start()
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
