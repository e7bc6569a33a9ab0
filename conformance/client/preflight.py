"""One request before any test proves the endpoint answers for the model, or explains why not.

A broken endpoint must end the run with one clear message and a usage-error exit code, never a
page of identical failures and never a green run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from conformance.client import EmbeddingsClient, Endpoint, EndpointError, HttpClient
from conformance.client.http import MAX_RESPONSE_BYTES
from conformance.client.models import decode_models

PREFLIGHT_INPUT = "conformance preflight"


class PreflightError(Exception):
    """The endpoint cannot be tested; the message says why and what to do."""


def _snippet(raw: bytes) -> str:
    text = raw[:160].decode("utf-8", "replace").replace("\n", " ").strip()
    return text + ("..." if len(raw) > 160 else "")


def _json_or_none(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _common_failure(url: str, status: int, headers: Mapping[str, str], raw: bytes) -> str | None:
    """Messages shared by both routes: auth, redirects, non-JSON bodies."""
    if status in (401, 403):
        return (
            f"{url} refused the credentials (HTTP {status}): pass --api-key or set "
            "EMBEDDINGS_API_KEY (or OPENAI_API_KEY)."
        )
    if 300 <= status < 400:
        target = headers.get("location", "?")
        return (
            f"{url} redirects (HTTP {status}) to {target}; give the final URL as --endpoint "
            "(redirects are not followed, so the API key never leaves the named host)."
        )
    if status == 200 and _json_or_none(raw) is None:
        kind = headers.get("content-type", "no content-type")
        return (
            f"{url} answered HTTP 200 with {kind}, not JSON: is this an embeddings API? "
            f"Body starts: {_snippet(raw)!r}"
        )
    return None


def open_client(
    endpoint: Endpoint,
    model: str | None,
    api_key: str | None,
    timeout: float,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> EmbeddingsClient:
    """A client for ``model``, or for the first model the endpoint lists when it is None."""
    if model is None:
        lister = HttpClient(endpoint, api_key, timeout, max_bytes)
        model = discover_model(lister)
        client = EmbeddingsClient(endpoint, model, api_key, timeout, max_bytes)
        client.request_count = lister.request_count  # the listing is one of the run's requests
        return client
    return EmbeddingsClient(endpoint, model, api_key, timeout, max_bytes)


class Answer(Protocol):
    """An HTTP answer as both routes give it (HttpReply, Exchange)."""

    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> dict[str, str]: ...
    @property
    def raw(self) -> bytes: ...


AnswerT = TypeVar("AnswerT", bound=Answer)


def _usable(url: str, ask: Callable[[], AnswerT]) -> AnswerT:
    """The answer to ``ask()``, unless there is none or it fails the same way on every route
    (credentials, redirects, a page that is not JSON)."""
    try:
        answer = ask()
    except EndpointError as exc:
        raise PreflightError(f"no usable answer from the endpoint: {exc}") from None
    failure = _common_failure(url, answer.status, answer.headers, answer.raw)
    if failure:
        raise PreflightError(failure)
    return answer


def discover_model(client: HttpClient) -> str:
    """The first model id from GET /v1/models. The run sends it with every request, so only a
    well-formed list names it: anything malformed is an error that says what, never a guess."""
    url = client.endpoint.models_url
    response = _usable(url, client.get_models)
    listing = decode_models(response.status, response.raw)
    if listing.problem is not None:
        raise PreflightError(
            f"could not list models at {url}: {listing.problem}; name the model with --model NAME."
        )
    return listing.ids[0]


def _model_unknown(document: Any, model: str) -> bool:
    error = document.get("error") if isinstance(document, dict) else None
    text = json.dumps(document).lower() if document is not None else ""
    code = error.get("code") if isinstance(error, dict) else None
    return code == "model_not_found" or model.lower() in text or "model" in text


def check_embeddings_route(client: EmbeddingsClient) -> None:
    """POST one small input; raise PreflightError unless a 200 JSON object comes back."""
    url = client.endpoint.embeddings_url
    exchange = _usable(url, lambda: client.embed(PREFLIGHT_INPUT))
    document = _json_or_none(exchange.raw)
    if exchange.status == 404 and _model_unknown(document, client.model):
        raise PreflightError(
            f"the endpoint does not know model {client.model!r} (HTTP 404 at "
            f"{url}): {_snippet(exchange.raw)}. Check --model."
        )
    if exchange.status != 200:
        raise PreflightError(
            f"{url} answered HTTP {exchange.status} to a one-line request for "
            f"model {client.model!r}: {_snippet(exchange.raw)!r}"
        )
    if not isinstance(document, dict):
        raise PreflightError(
            f"{url} answered with JSON that is not an object: {_snippet(exchange.raw)!r}"
        )
