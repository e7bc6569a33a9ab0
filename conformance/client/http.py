"""A small HTTP client for one embeddings endpoint, keeping every exchange for reproducers.

Hostile servers must not hang or exhaust the suite: every body is read in pieces against a size
cap and a total deadline (a per-read socket timeout alone never fires on a server that trickles
one byte a second), and redirects are never followed, so the API key never reaches another host.
A server that stops answering costs one timeout: later requests fail at once while a short probe
gets no answer either (see ``HttpClient.check_answering``).
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import functools
import http.client
import json
import math
import re
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

import requests
import urllib3

from conformance import __version__
from conformance.client.curl import curl_command
from conformance.client.decode import decode_error_body, decode_response
from conformance.client.endpoint import Endpoint
from conformance.client.models import decode_models
from conformance.client.request_count import RequestCounter
from conformance.client.retry_budget import RetryBudget
from conformance.corpus import BadRequest
from conformance.tolerances import MAX_RESPONSE_MB
from conformance.wire import EmbeddingBatch, ErrorBody

READ_SIZE = 1 << 16
RETRIED = (429, 503)  # rate limited, or busy: asked again, politely
RETRIES = 3
LONGEST_WAIT = 10.0  # seconds: a longer Retry-After is cut to this
PROBE_TIMEOUT = 5.0  # seconds (at most --request-timeout): is a server that hung still hung?
MAX_RESPONSE_BYTES = MAX_RESPONSE_MB << 20  # the default of --max-response-mb
JSON = "application/json"
CLOSED_BEFORE_ANSWERING = (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected)


class EndpointError(Exception):
    """No usable HTTP answer: unreachable, reset, too slow, or too large."""


class NoAnswer(EndpointError):
    """No (complete) answer within the timeout: the server may have stopped answering."""


@dataclass
class Stall:
    """The first request since the last answer that got none in time, and the probes since."""

    request: str  # 'POST http://...'
    timeout: float
    at: str  # wall-clock time, for the message
    next_probe: float  # time.monotonic() from which the next request probes first
    probes: int = 0  # failed probes since


def describe_failure(exc: Exception) -> str:
    """A short reason ('Connection refused'), not a nested repr."""
    if isinstance(exc, requests.Timeout | TimeoutError):
        return "no answer before the timeout (--request-timeout)"
    errno = re.search(r"\[Errno -?\d+\] ([^'\")]+)", str(exc))
    if errno:
        return errno.group(1).strip()
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def closed_before_answering(exc: BaseException) -> bool:
    """Whether the connection was reset or closed before any answer came (a pooled connection
    the server had closed), as opposed to a refused connection, a timeout or a broken answer."""
    todo: list[object] = [exc]
    seen: set[int] = set()  # exceptions can point at each other through their context
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, CLOSED_BEFORE_ANSWERING):
            return True
        if isinstance(item, BaseException):
            todo += [*item.args, item.__cause__, item.__context__]
    return False


def named_wait(retry_after: str | None) -> float | None:
    """The seconds a Retry-After names (seconds, or an HTTP date); None when it names none."""
    if not retry_after:
        return None
    try:
        seconds = float(retry_after)
        return None if math.isnan(seconds) else seconds  # 'nan' names no wait
    except ValueError:
        with contextlib.suppress(TypeError, ValueError, IndexError):
            when = email.utils.parsedate_to_datetime(retry_after)
            return (when - datetime.datetime.now(datetime.UTC)).total_seconds()
    return None


def retry_delay(retry_after: str | None, attempt: int) -> float:
    """Seconds to wait before asking again: the server's Retry-After (seconds, or an HTTP
    date) when it gives one, else 0.5 s doubled per attempt; never more than LONGEST_WAIT."""
    named = named_wait(retry_after)
    wait = 0.5 * 2**attempt if named is None else named
    return float(min(max(wait, 0.0), LONGEST_WAIT))


@dataclass(frozen=True)
class HttpReply:
    """A complete HTTP answer."""

    status: int
    headers: dict[str, str]  # names lower-cased
    raw: bytes
    elapsed: float
    retries: int = 0  # times the request was sent again after a 429 or 503


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} literal: RFC 8259 JSON has no NaN or Infinity")


def parse_json(raw: bytes) -> Any:
    """Strict JSON, as the strict parsers of many client languages see it (no NaN/Infinity)."""
    return json.loads(raw, parse_constant=_reject_constant)


def parse_body(status: int, raw: bytes) -> tuple[EmbeddingBatch | None, str | None]:
    if status != 200:
        return None, f"HTTP status {status}"
    try:
        document = parse_json(raw)
    except ValueError as exc:
        return None, f"body is not valid JSON ({exc})"
    try:
        return decode_response(document), None
    except ValueError as exc:
        return None, str(exc)


@dataclass(frozen=True)
class Exchange:
    """One request and what came back; ``batch`` is set when the body decoded as an envelope."""

    url: str
    request: Any  # the JSON document sent (None when the body was not JSON)
    body: bytes  # the exact bytes sent
    content_type: str | None  # of the request
    status: int
    headers: dict[str, str]
    raw: bytes
    batch: EmbeddingBatch | None
    problem: str | None  # why there is no batch
    elapsed: float
    with_auth: bool
    retries: int = 0  # times the request was sent again after a 429 or 503 before this answer

    @property
    def response_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.batch is not None

    @property
    def error_body(self) -> ErrorBody:
        return decode_error_body(self.raw)

    def curl(self) -> str:
        body = self.request if self.request is not None else self.body
        return curl_command(
            self.url, body, with_auth=self.with_auth, content_type=self.content_type
        )

    def describe(self) -> str:
        """One line on what came back, for failure messages."""
        snippet = self.raw[:200].decode("utf-8", "replace").replace("\n", " ")
        reason = f" ({self.problem})" if self.problem else ""
        kind = self.response_type or "no content-type"
        return f"HTTP {self.status} {kind}{reason}: {snippet}"


class HttpClient:
    """Requests to one endpoint's routes, with its credentials and limits; safe to share
    between threads. Knows no model: enough to list the models an endpoint serves."""

    def __init__(
        self,
        endpoint: Endpoint,
        api_key: str | None,
        timeout: float,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self._api_key = api_key
        self._local = threading.local()
        self._stall: Stall | None = None
        self._stall_lock = threading.Lock()  # held briefly: records and clears
        self._probe_lock = threading.Lock()  # one probe at a time; the others take its verdict
        self.request_count = RequestCounter()  # every request sent, over the client's life
        self.retry_budget = RetryBudget()  # the waiting before retries, over the client's life

    @property
    def with_auth(self) -> bool:
        return bool(self._api_key)

    @property
    def retries(self) -> int:
        """Requests sent again after a 429 or 503 so far, by every thread (the suite counts
        them per test, so per requirement)."""
        return self.request_count.total.retries

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"User-Agent": f"embedding-conformance/{__version__}"}
        if content_type:
            headers["Content-Type"] = content_type
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _session(self) -> requests.Session:
        # requests.Session is not thread-safe: one per thread.
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def send(
        self,
        method: str,
        url: str,
        body: bytes | None = None,
        content_type: str | None = None,
        *,
        status_only: bool = False,
        timeout: float | None = None,
        retry: bool = True,
    ) -> HttpReply:
        """One request, its whole answer read within the deadline and the size cap; with
        ``status_only``, the body is discarded unread (for answers too large to matter). A 429
        or 503 is asked again up to RETRIES times, after the wait the server asks for, or a
        backoff within the client's retry budget (never with ``retry=False``: the first answer
        is the one judged); each request is counted, and each retry."""
        for attempt in range(RETRIES + 1):
            self.check_answering(method, url)
            try:
                reply = self._send_once(
                    method, url, body, content_type, status_only, timeout, again=attempt > 0
                )
            except NoAnswer:
                self._record_stall(method, url, timeout or self.timeout)
                raise
            if reply.status not in RETRIED or attempt == RETRIES or not retry:
                return replace(reply, retries=attempt)
            retry_after = reply.headers.get("retry-after")
            wanted = retry_delay(retry_after, attempt)
            named = named_wait(retry_after) is not None
            self.retry_budget.wait(wanted, named=named)
        raise AssertionError("unreachable")

    def _send_once(
        self,
        method: str,
        url: str,
        body: bytes | None,
        content_type: str | None,
        status_only: bool,
        timeout: float | None,
        *,
        again: bool = False,
    ) -> HttpReply:
        """``again``: a retry after a 429 or 503, counted as such."""
        self.request_count.sent(again=again)
        started = time.monotonic()
        request = functools.partial(
            self._session().request,
            method,
            url,
            data=body,
            headers=self._headers(content_type),
            timeout=timeout or self.timeout,
            allow_redirects=False,
            stream=True,
        )
        try:
            try:
                response = request()
            except requests.ConnectionError as exc:
                if not closed_before_answering(exc):
                    raise
                # A kept-alive connection the server had closed (uvicorn does so after an
                # unhandled 500, without "Connection: close"): the request never reached it.
                # Clients open a new connection and send it again (the OpenAI SDK does); so
                # does the suite, once, so one answer does not fail the next test's request.
                self._session().close()
                response = request()
        except requests.Timeout as exc:
            raise NoAnswer(f"{method} {url}: {describe_failure(exc)}") from exc
        except requests.RequestException as exc:
            raise EndpointError(f"{method} {url}: {describe_failure(exc)}") from exc
        try:
            raw = b"" if status_only else self._read(response, started)
        except (urllib3.exceptions.HTTPError, OSError, requests.RequestException) as exc:
            raise EndpointError(
                f"{method} {url}: the answer broke off: {describe_failure(exc)}"
            ) from exc
        except EndpointError as exc:
            raise type(exc)(f"{method} {url}: {exc}") from None
        finally:
            response.close()
        headers = {name.lower(): value for name, value in response.headers.items()}
        return HttpReply(response.status_code, headers, raw, time.monotonic() - started)

    def _read(self, response: requests.Response, started: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            if time.monotonic() - started > self.timeout:
                raise NoAnswer(
                    f"no complete answer within {self.timeout:g} s "
                    f"(--request-timeout); {size} bytes arrived"
                )
            chunk = response.raw.read1(READ_SIZE, decode_content=True)  # returns what arrived
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > self.max_response_bytes:
                raise EndpointError(
                    f"answer larger than {self.max_response_bytes >> 20} MB "
                    "(--max-response-mb); stopped reading"
                )
            chunks.append(chunk)

    def _record_stall(self, method: str, url: str, timeout: float) -> None:
        with self._stall_lock:
            if self._stall is None:  # the first hung request is the one to name
                at = datetime.datetime.now().strftime("%H:%M:%S")
                self._stall = Stall(f"{method} {url}", timeout, at, time.monotonic())

    def check_answering(self, method: str, url: str) -> None:
        """Raise EndpointError at once, sending nothing, while the server has stopped answering:
        since a request got no answer in time, a probe (``probe_request``) with a short timeout
        got none either. A probe that gets any HTTP answer clears the stall (the server hung on
        that one input only); a failed one is tried again after the timeout, then after twice
        as long and so on, so a server that recovers is used again but a hung one costs a run
        a few timeouts in all, not one per request. For requests sent by other means too (the
        openai SDK)."""
        if self._stall is None:  # the usual case, without a lock
            return
        with self._probe_lock:
            stall = self._stall
            if stall is None:  # cleared by the probe this thread waited for
                return
            probe_timeout = min(PROBE_TIMEOUT, self.timeout)
            if time.monotonic() >= stall.next_probe:
                if self._probe_answered(probe_timeout):
                    with self._stall_lock:
                        self._stall = None
                    return
                stall.probes += 1
                stall.next_probe = time.monotonic() + self.timeout * 2 ** (stall.probes - 1)
            probe = self.probe_request()[3]
            raise EndpointError(
                f"{method} {url}: not sent: the server stopped answering: {stall.request} got "
                f"no answer within {stall.timeout:g} s (--request-timeout) at {stall.at}, nor did "
                f"{probe} within {probe_timeout:g} s since"
            )

    def wait_until_answering(self, patience: float) -> float | None:
        """After a request that got no answer in time: probe until the server answers again,
        for at most ``patience`` seconds. A server still working on that request is busy, not
        hung; once it answers, the stall is cleared and the requests after it are sent as
        usual. Returns the seconds waited, or None when it did not answer within ``patience``
        (the stall stays: later requests fail at once, as after any hang)."""
        started = time.monotonic()
        probe_timeout = min(PROBE_TIMEOUT, self.timeout)
        while self._stall is not None:
            waited = time.monotonic() - started
            if waited >= patience:
                return None
            if self._probe_answered(min(probe_timeout, patience - waited)):
                with self._stall_lock:
                    self._stall = None
            else:
                time.sleep(min(1.0, max(0.0, patience - (time.monotonic() - started))))
        return time.monotonic() - started

    def probe_request(self) -> tuple[str, str, bytes | None, str]:
        """Method, URL, body and description of the request that asks whether a server that
        hung answers again: here the models route, all this client knows."""
        return "GET", self.endpoint.models_url, None, f"GET {self.endpoint.models_url}"

    def _probe_answered(self, timeout: float) -> bool:
        method, url, body, _ = self.probe_request()
        try:
            self._send_once(method, url, body, JSON if body else None, True, timeout)
        except EndpointError:
            return False
        return True  # any status: the server answers

    def get_models(self) -> HttpReply:
        return self.send("GET", self.endpoint.models_url)

    def listed_context(self, model: str) -> int | None:
        """The context length (in tokens) the models route states for ``model``, as vLLM
        does (``max_model_len``); None when it states none."""
        try:
            reply = self.get_models()
        except EndpointError:
            return None
        return decode_models(reply.status, reply.raw).context_of(model)


class EmbeddingsClient(HttpClient):
    """Sends embeddings requests for one model."""

    def __init__(
        self,
        endpoint: Endpoint,
        model: str,
        api_key: str | None,
        timeout: float,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        super().__init__(endpoint, api_key, timeout, max_response_bytes)
        self.model = model

    def probe_request(self) -> tuple[str, str, bytes | None, str]:
        """A one-word embeddings request: only an answer that needs the model proves the server
        answers again. A frontend can answer its models route from its own event loop while the
        worker behind it is wedged (the reference server's asyncio frontend does)."""
        body = json.dumps({"model": self.model, "input": "ping"}).encode("ascii")
        return "POST", self.endpoint.embeddings_url, body, "a one-word embeddings request"

    def post(self, document: Any, *, retry: bool = True) -> Exchange:
        """POST a JSON document to the embeddings route (``retry=False``: a 429 or 503 is
        the answer, not asked again)."""
        body = json.dumps(document).encode("ascii")  # \\u escapes: any str is encodable
        return self._exchange(document, body, JSON, retry)

    def post_for_status(self, document: Any, timeout: float) -> Exchange:
        """POST a JSON document and keep only the status line and headers: the body (which
        may be tens of MB) is discarded unread, so neither the size cap nor the read
        deadline can turn a large answer into 'no answer'."""
        body = json.dumps(document).encode("ascii")
        url = self.endpoint.embeddings_url
        reply = self.send("POST", url, body, JSON, status_only=True, timeout=timeout)
        self.request_count.embedded(reply.status, None)  # unread: it did not say
        return Exchange(
            url,
            document,
            body,
            JSON,
            reply.status,
            reply.headers,
            b"",
            None,
            "body not read: judged on its status line",
            reply.elapsed,
            self.with_auth,
            reply.retries,
        )

    def post_raw(self, body: bytes, content_type: str | None) -> Exchange:
        """POST exact bytes (malformed JSON, other content types) to the embeddings route."""
        return self._exchange(None, body, content_type)

    def _exchange(
        self, document: Any, body: bytes, content_type: str | None, retry: bool = True
    ) -> Exchange:
        url = self.endpoint.embeddings_url
        reply = self.send("POST", url, body, content_type, retry=retry)
        batch, problem = parse_body(reply.status, reply.raw)
        usage = batch.usage if batch is not None else None
        self.request_count.embedded(reply.status, usage.prompt_tokens if usage else None)
        return Exchange(
            url,
            document,
            body,
            content_type,
            reply.status,
            reply.headers,
            reply.raw,
            batch,
            problem,
            reply.elapsed,
            self.with_auth,
            reply.retries,
        )

    def send_bad(self, bad: BadRequest) -> Exchange:
        """One of the packaged bad requests, sent exactly as written."""
        if bad.raw is not None or bad.content_type != JSON:
            return self.post_raw(bad.payload(self.model), bad.content_type)
        return self.post(bad.document(self.model))

    def embed(self, inputs: Any, *, retry: bool = True, **params: Any) -> Exchange:
        """Embed ``inputs`` with optional request parameters (encoding_format, dimensions...);
        ``retry=False``: a 429 or 503 is the answer."""
        return self.post({"model": self.model, "input": inputs, **params}, retry=retry)

    def tokenize(self, text: str, *, special_tokens: bool = True) -> list[int] | None:
        """Token ids (with special tokens, unless told) from a vLLM-style /tokenize route; None
        if absent."""
        url = self.endpoint.tokenize_url
        if url is None:
            return None
        document = {"model": self.model, "prompt": text, "add_special_tokens": special_tokens}
        try:
            reply = self.send("POST", url, json.dumps(document).encode("ascii"), JSON)
            tokens = parse_json(reply.raw).get("tokens") if reply.status == 200 else None
        except (EndpointError, ValueError, AttributeError):
            return None
        if not isinstance(tokens, list) or not tokens or any(type(t) is not int for t in tokens):
            return None
        return tokens
