"""The default engine: sentence-transformers on the CPU, pooling done here so faults can change
it."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, cast

import numpy as np
import torch

from conformance.references.sources import model_card
from conformance.server.engines import EngineOutput, resolve_model

CHUNK_ROWS = 32  # bounds the peak memory of one forward pass


class SentenceTransformersEngine:
    def __init__(self, model: str | None, fault: str | None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.model_name, path = resolve_model(model)
        with contextlib.redirect_stdout(sys.stderr):  # keep stdout for the worker protocol
            self._model = SentenceTransformer(path, device="cpu")
        self.fault = fault
        card = model_card(path)
        self.pooling = str(card.get("pooling", "mean"))
        self.normalized = bool(card.get("normalized", False))
        # What runs after pooling (a Dense projection): modules other than the encoder, the
        # pooling and the normalization, which this engine does itself so faults can change it.
        self._head = [m for m in list(self._model)[2:] if type(m).__name__ != "Normalize"]
        _check_fault_applies(fault, self.pooling, self.normalized, bool(self._head))
        if fault == "dense-skipped":
            self._head = []
        loaded: Any = self._model  # sentence-transformers' annotations allow None here
        dimension = getattr(loaded, "get_embedding_dimension", None)
        self.dimension = int((dimension or loaded.get_sentence_embedding_dimension)())
        if fault == "dense-skipped":
            self.dimension = int(loaded[0].get_word_embedding_dimension())
        if fault == "truncate-64":  # a context length set too small, e.g. by a config default
            loaded.max_seq_length = 64
        self.max_tokens = int(loaded.max_seq_length)
        self.vocab_size = int(loaded.tokenizer.vocab_size)

    def tokenize(self, text: str, special_tokens: bool = True) -> list[int]:
        ids = self._model.tokenizer.encode(text, add_special_tokens=special_tokens)
        return [int(t) for t in ids]

    def embed_texts(self, texts: list[str]) -> EngineOutput:
        return self._embed(cast(dict[str, Any], self._model.preprocess(texts)))  # truncates

    def embed_tokens(self, ids: list[list[int]]) -> EngineOutput:
        return self._embed(self._id_features(ids))

    def _id_features(self, sequences: list[list[int]]) -> dict[str, Any]:
        """What preprocess builds for text, from ids taken as given: 0-padded, one segment."""
        sequences = [sequence[: self.max_tokens] for sequence in sequences]
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

    def _embed(self, features: dict[str, Any]) -> EngineOutput:
        tokens, mask = self._forward(features)
        lengths = [int(n) for n in mask.sum(dim=1)]
        if self.fault == "per-token":  # no pooling: the bug this project exists for
            rows = [tokens[i, :n] for i, n in enumerate(lengths)]
            return EngineOutput(torch.cat(rows).numpy(), lengths, sum(lengths))
        pooled = self._pool(tokens, mask)
        with torch.inference_mode():
            for module in self._head:
                pooled = module({"sentence_embedding": pooled})["sentence_embedding"]
        normalize = self.normalized or self.fault == "forced-normalize"
        if normalize and self.fault != "no-normalize":
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        matrix = np.ascontiguousarray(pooled.numpy(), dtype=np.float32)
        return EngineOutput(matrix, [1] * len(lengths), sum(lengths))

    def _pool(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        mode = {"cls-pooling": "cls", "mean-pooling": "mean"}.get(self.fault or "", self.pooling)
        if mode == "cls":  # the first token's state
            return tokens[:, 0]
        if mode == "lasttoken":
            if self.fault == "last-token-padded":  # the batch's last position, padding or not
                return tokens[:, -1]
            return tokens[torch.arange(len(tokens)), mask.sum(dim=1) - 1]  # the last real token
        if mode != "mean":
            raise ValueError(f"pooling {mode!r} is not implemented by this engine")
        # The padding bug: padding positions averaged in as if they were tokens.
        pool_mask = torch.ones_like(mask) if self.fault == "padding-unmasked" else mask
        weights = pool_mask.unsqueeze(-1).to(tokens.dtype)
        return (tokens * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)

    def _forward(self, features: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token embeddings [B, T, H] and the attention mask [B, T]."""
        count = len(features["input_ids"])
        parts = []
        with torch.inference_mode():
            for start in range(0, count, CHUNK_ROWS):
                chunk = {
                    key: value[start : start + CHUNK_ROWS] if torch.is_tensor(value) else value
                    for key, value in features.items()
                }
                parts.append(self._model[0](chunk)["token_embeddings"])
        return torch.cat(parts), features["attention_mask"]


def _check_fault_applies(fault: str | None, pooling: str, normalized: bool, dense: bool) -> None:
    """A fault planted in a model without the feature it breaks would change nothing: refuse it."""
    applies_to = {
        "cls-pooling": (pooling != "cls", "a pooling other than CLS"),
        "mean-pooling": (pooling != "mean", "a pooling other than mean"),
        "padding-unmasked": (pooling == "mean", "mean pooling"),
        "last-token-padded": (pooling == "lasttoken", "last-token pooling"),
        "no-normalize": (normalized, "a Normalize module"),
        "forced-normalize": (not normalized, "no Normalize module"),
        "dense-skipped": (dense, "a Dense layer"),
    }
    if fault in applies_to and not applies_to[fault][0]:
        raise ValueError(f"fault {fault!r} needs a model with {applies_to[fault][1]}")
