"""The HTTP frontend (Starlette on uvicorn): OpenAI-compatible routes over the worker pool."""

from __future__ import annotations

import hmac
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

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
    FAULTS,
    LEAKS_SHARED_MEMORY,
    FaultName,
    hook_of,
    is_fault_name,
)
from conformance.server.faults.frontend import (
    AFTER_VALIDATION,
    BEFORE_VALIDATION,
    ERRORS_AS_500,
    LAX_FAULTS,
    ROUTE_STATES,
    UNKNOWN_FORMAT,
)
from conformance.server.pool import WorkerGone, WorkerPool, WorkerReply
from conformance.server.responses import (
    BASE64_REWRITES,
    embeddings_body,
    error_body,
    json_response,
)
from conformance.server.route_state import STATELESS, Rewrite, RouteState


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
    max_batch: int | None = None  # more inputs in one request get a 413, as TEI refuses them
    fault_routes: bool = False  # also serve each shareable fault under /faults/<name>/...


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
        refused = self._past_the_batch(parsed, fault) or await self._past_the_context(parsed, fault)
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

    def _past_the_batch(
        self, parsed: EmbeddingsRequest, fault: FaultName | None
    ) -> Response | None:
        """With --max-batch, more inputs than it in one request are refused with a 413, as
        text-embeddings-inference refuses more than its --max-client-batch-size (32 by default);
        None when the request is within it."""
        limit, count = self.config.max_batch, len(parsed.inputs)
        if limit is None or count <= limit:
            return None
        message = f"batch size {count} > maximum allowed batch size {limit}"
        return api_error(ApiError(413, message, "input"), fault)

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
