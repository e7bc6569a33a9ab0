"""A small HTTP client for one embeddings endpoint, keeping every exchange for reproducers."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests

from conformance import __version__
from conformance.client.batch import EmbeddingBatch
from conformance.client.curl import curl_command
from conformance.client.decode import decode_response
from conformance.options import Endpoint


class EndpointError(Exception):
    """The endpoint could not be talked to at all (no HTTP answer)."""


def describe_failure(exc: requests.RequestException) -> str:
    """A short reason: 'connection refused', 'timed out after 30s', not a nested repr."""
    if isinstance(exc, requests.Timeout):
        return "no answer before the timeout (--request-timeout)"
    errno = re.search(r"\[Errno -?\d+\] ([^'\")]+)", str(exc))
    if errno:
        return errno.group(1).strip()
    return f"{type(exc).__name__}: {str(exc)[:200]}"


@dataclass(frozen=True)
class Exchange:
    """One request and what came back; ``batch`` is set when the body decoded as an envelope."""

    url: str
    request: dict[str, Any]
    status: int
    headers: dict[str, str]
    raw: bytes
    batch: EmbeddingBatch | None
    problem: str | None  # why there is no batch
    elapsed: float
    with_auth: bool

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.batch is not None

    def curl(self) -> str:
        return curl_command(self.url, self.request, with_auth=self.with_auth)

    def describe(self) -> str:
        """One line on what came back, for failure messages."""
        snippet = self.raw[:200].decode("utf-8", "replace").replace("\n", " ")
        reason = f" ({self.problem})" if self.problem else ""
        return f"HTTP {self.status} {self.content_type or 'no content-type'}{reason}: {snippet}"


def parse_body(status: int, raw: bytes) -> tuple[EmbeddingBatch | None, str | None]:
    if status != 200:
        return None, f"HTTP status {status}"
    try:
        document = json.loads(raw)
    except ValueError as exc:
        return None, f"body is not JSON ({exc})"
    try:
        return decode_response(document), None
    except ValueError as exc:
        return None, str(exc)


class EmbeddingsClient:
    """Sends embeddings requests for one model; safe to share between threads."""

    def __init__(self, endpoint: Endpoint, model: str, api_key: str | None, timeout: float):
        self.endpoint = endpoint
        self.model = model
        self.timeout = timeout
        self._api_key = api_key
        self._local = threading.local()

    @property
    def headers(self) -> dict[str, str]:
        headers = {"User-Agent": f"embedding-conformance/{__version__}"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _session(self) -> requests.Session:
        # requests.Session is not thread-safe: one per thread.
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def post(self, body: dict[str, Any]) -> Exchange:
        """POST a raw body to the embeddings route."""
        url = self.endpoint.embeddings_url
        started = time.perf_counter()
        try:
            response = self._session().post(
                url, json=body, headers=self.headers, timeout=self.timeout, allow_redirects=False
            )
        except requests.RequestException as exc:
            raise EndpointError(f"POST {url}: {describe_failure(exc)}") from exc
        elapsed = time.perf_counter() - started
        headers = {name.lower(): value for name, value in response.headers.items()}
        batch, problem = parse_body(response.status_code, response.content)
        return Exchange(
            url,
            body,
            response.status_code,
            headers,
            response.content,
            batch,
            problem,
            elapsed,
            with_auth=bool(self._api_key),
        )

    def embed(self, inputs: str | list[str], **params: Any) -> Exchange:
        """Embed ``inputs`` with optional request parameters (encoding_format, dimensions...)."""
        return self.post({"model": self.model, "input": inputs, **params})

    def get_models(self) -> requests.Response:
        try:
            return self._session().get(
                self.endpoint.models_url,
                headers=self.headers,
                timeout=self.timeout,
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            url = self.endpoint.models_url
            raise EndpointError(f"GET {url}: {describe_failure(exc)}") from exc
