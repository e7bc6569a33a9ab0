"""The real models as fetched: they load where users load them and mean what they should. They
need the weights (hundreds of MB from the registries): `tox -e models` fetches them and runs
these; without them (CI) each test skips, saying how to fetch."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conformance.models import nomic
from conformance.models.fetch import FetchedModel, fetched
from conformance.models.pinned import MPNET, NOMIC, NOMIC_GGUF, NOMIC_GGUF_FILE

pytestmark = pytest.mark.real_models

QUERIES = [
    "search_query: What is the capital of France?",
    "search_query: how do plants make energy",
    "search_query: best way to learn python programming",
]
DOCUMENTS = [
    "search_document: Paris is the capital and largest city of France.",
    "search_document: Photosynthesis converts light energy into chemical energy in plants.",
    "search_document: Python tutorials for beginners teach programming step by step.",
]


def folder_of(model: FetchedModel) -> Path:
    folder = fetched(model)
    if folder is None:
        pytest.skip(
            f"{model.name} is not fetched: embedding-conformance models fetch {model.name} "
            "(or tox -e models)"
        )
    return folder


def similarities(folder: Path, queries: list[str], documents: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    vectors = model.encode(queries + documents, normalize_embeddings=False)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # Normalize is there
    return np.asarray(vectors[: len(queries)] @ vectors[len(queries) :].T)


@pytest.mark.parametrize("model", [MPNET, NOMIC], ids=lambda m: m.name)
def test_each_query_finds_its_document(model: FetchedModel) -> None:
    """Retrieval works on the real weights: each query's best document is its own, by a clear
    margin (a broken conversion or a wrong tokenizer leaves near-random scores)."""
    scores = similarities(folder_of(model), QUERIES, DOCUMENTS)
    assert list(scores.argmax(axis=1)) == [0, 1, 2]
    others = scores[~np.eye(3, dtype=bool)].reshape(3, 2)
    assert (np.diag(scores) - others.max(axis=1) > 0.15).all()


def test_nomics_gate_and_up_projections_are_where_the_converter_puts_them(
    tmp_path: Path,
) -> None:
    """The real GGUF converted with fc11 and fc12 swapped collapses every vector onto one
    direction (every cosine 1.0): the mapping the converter uses is the one that means
    something, proven on the real weights, not only on a synthetic model."""
    source = folder_of(NOMIC_GGUF) / NOMIC_GGUF_FILE
    swapped = dict(nomic.PER_LAYER)
    swapped["ffn_up.weight"], swapped["ffn_gate.weight"] = "mlp.fc12.weight", "mlp.fc11.weight"
    folder = tmp_path / "swapped"
    folder.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nomic, "PER_LAYER", swapped)
        nomic.convert(source, folder)
    scores = similarities(folder, QUERIES, DOCUMENTS)
    assert scores.min() > 0.999


def test_the_models_contexts_are_their_own() -> None:
    """MPNet: sentence-transformers truncates at 384 tokens though its positions allow 512;
    nomic: 2,048 tokens, read from its GGUF."""
    from sentence_transformers import SentenceTransformer

    mpnet = SentenceTransformer(str(folder_of(MPNET)), device="cpu")
    assert mpnet.max_seq_length == 384
    config = json.loads((folder_of(MPNET) / "config.json").read_text())
    assert config["max_position_embeddings"] == 514  # 512 positions after RoBERTa's offset of 2
    assert SentenceTransformer(str(folder_of(NOMIC)), device="cpu").max_seq_length == 2048
