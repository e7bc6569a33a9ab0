"""Engines compute embeddings inside a worker; the worker and frontend never see the model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from conformance.server.faults import FAULTS, FaultName
from conformance.server.model_names import resolve_model
from conformance.server.transports import Float32Matrix


@dataclass(frozen=True)
class EngineOutput:
    """Vectors for a batch: ``rows[i]`` consecutive rows of ``matrix`` belong to input i
    (1 for a pooled embedding; one per token for the per-token fault), which was ``tokens[i]``
    tokens long."""

    matrix: Float32Matrix  # [sum(rows), dim]
    rows: list[int]
    tokens: list[int]

    @property
    def prompt_tokens(self) -> int:
        return sum(self.tokens)


class Engine(Protocol):
    """What a worker needs from a model runtime."""

    model_name: str
    dimension: int
    normalized: bool  # the model's own output is unit length (a Normalize module)
    max_tokens: int
    vocab_size: int

    def embed_texts(self, texts: list[str]) -> EngineOutput: ...

    def embed_tokens(self, ids: list[list[int]]) -> EngineOutput: ...

    def tokenize(self, text: str, special_tokens: bool = True) -> list[int]:
        """Token ids (with the model's special tokens unless told), as the text path sees them."""
        ...


ENGINES = ("sentence-transformers", "vllm")
ENGINE_FAULTS = tuple(name for name, fault in FAULTS.items() if fault.layer == "engine")


def load_engine(name: str, model: str | None, fault: FaultName | None) -> Engine:
    """Build the named engine; ``fault`` selects an engine-level bug (see ENGINE_FAULTS)."""
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r} (sentence-transformers or vllm)")
    # The name first: a model that is not there is refused in a fraction of a second, before
    # the engine's imports (seconds of CPU, paid again by every restart of a crash loop).
    resolved = resolve_model(model)
    if name == "sentence-transformers":
        from conformance.server.engines.sentence_transformers import SentenceTransformersEngine

        return SentenceTransformersEngine(model, fault, resolved=resolved)
    from conformance.server.engines.vllm import VllmEngine  # type: ignore[import-not-found,unused-ignore]

    engine: Engine = VllmEngine(model, fault, resolved=resolved)
    return engine
