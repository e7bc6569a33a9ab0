"""The default engine: sentence-transformers on the CPU, pooling done here so faults can change
it."""

from __future__ import annotations

import contextlib
import copy
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
import torch

from conformance.server.engines import EngineOutput
from conformance.server.faults import FaultName
from conformance.server.model_folder import ModelLayout, read_layout
from conformance.server.model_names import resolve_model
from conformance.server.runtime import threads_for_pass

CHUNK_ROWS = 32  # inputs per forward pass: bounds its peak memory
# A pooling: the token states [B, T, H] and the attention mask [B, T] to one vector per input
Pooler = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _cls(tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The first token's state."""
    return tokens[:, 0]


def _last_token(tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The last real token's state."""
    return tokens[torch.arange(len(tokens)), mask.sum(dim=1) - 1]


def _mean(tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = mask.unsqueeze(-1).to(tokens.dtype)
    return (tokens * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)


def _mean_over_padding(tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The padding bug: padding positions averaged in as if they were tokens."""
    return _mean(tokens, torch.ones_like(mask))


def _last_position(tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The batch's last position, padding or not."""
    return tokens[:, -1]


POOLERS: dict[str, Pooler] = {"mean": _mean, "cls": _cls, "lasttoken": _last_token}
POOLINGS = tuple(POOLERS)  # the modes this engine implements

# The engine faults, by what planting one changes (once, so the forward pass never asks).
# The pooling computed instead of the model's:
FAULTY_POOLERS: dict[FaultName, Pooler] = {
    "cls-pooling": _cls,
    "mean-pooling": _mean,
    "padding-unmasked": _mean_over_padding,
    "last-token-padded": _last_position,
}
# Whether the vectors are normalized, whatever the model declares:
FAULTY_NORMALIZATION: dict[FaultName, bool] = {"no-normalize": False, "forced-normalize": True}
# No pooling at all: one un-normalized vector per token (the bug this project exists for):
UNPOOLED: frozenset[FaultName] = frozenset({"per-token"})


def _dense_skipped(engine: SentenceTransformersEngine) -> None:
    """The Dense projection ignored: the encoder's values come out, and as many."""
    engine._head = []
    encoder: Any = engine._model[0]  # the name changed in sentence-transformers 5
    size = getattr(encoder, "get_embedding_dimension", None)
    engine.dimension = int((size or encoder.get_word_embedding_dimension)())


def _context_of_64(engine: SentenceTransformersEngine) -> None:
    """A context length set too small, e.g. by a config default."""
    engine.max_tokens = 64


def _context_of_positions(engine: SentenceTransformersEngine) -> None:
    """The context read from config.json's max_position_embeddings (512 for BERT) instead of
    the model's own max_seq_length (256 for all-MiniLM-L6-v2), as FastChat's worker does:
    inputs past the model's context are embedded whole, up to the positions there are."""
    engine.max_tokens = engine.positions or engine.max_tokens


# The engine's own settings (and so the model facts it reports):
SETTINGS_CHANGED: dict[FaultName, Callable[[SentenceTransformersEngine], None]] = {
    "dense-skipped": _dense_skipped,
    "truncate-64": _context_of_64,
    "context-of-positions": _context_of_positions,
}
# Model inputs (input_ids, attention_mask, ...) changed before the forward pass, in place
Features = dict[str, Any]


def _sep_dropped(features: Features) -> None:
    """Text tokenized without its closing special token ([SEP]): each text's last token masked
    out of attention and pooling, the tokens before it where they were."""
    mask = features["attention_mask"]
    rows, last = torch.arange(len(mask)), mask.sum(dim=1) - 1
    mask[rows, last] = 0
    features["input_ids"][rows, last] = 0


def _positions_shifted(features: Features) -> None:
    """Position ids counted from 2, as RoBERTa numbers them (after its padding index), in a
    model whose positions count from 0: every token sits two places off."""
    ids = features["input_ids"]
    features["position_ids"] = torch.arange(2, 2 + ids.shape[1]).expand_as(ids)


# ... of text only (token ids are embedded as sent):
TEXT_FEATURES_CHANGED: dict[FaultName, Callable[[Features], None]] = {"no-sep": _sep_dropped}
# ... of every input:
FEATURES_CHANGED: dict[FaultName, Callable[[Features], None]] = {
    "positions-shifted": _positions_shifted
}


class SentenceTransformersEngine:
    def __init__(
        self,
        model: str | None,
        fault: FaultName | None,
        *,
        resolved: tuple[str, str] | None = None,
    ) -> None:
        """``resolved``: what ``resolve_model(model)`` gave, when the caller already asked."""
        self.model_name, path = resolved or resolve_model(model)
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        with contextlib.redirect_stdout(sys.stderr):  # keep stdout for the worker protocol
            self._model = SentenceTransformer(path, device="cpu")
        linear_layers_on_onednn(self._model[0])
        layout = _layout_of_loaded(path, self._model)
        self.pooling = str(layout.pooling)  # one of POOLINGS, checked on loading
        self.normalized = layout.normalized
        # What runs on the pooled vector (a Dense projection); the pooling and the final
        # normalization this engine does itself, so that faults can change them.
        self._head = [self._model[position] for position in layout.head]
        loaded: Any = self._model  # sentence-transformers' annotations allow None here
        dimension = getattr(loaded, "get_embedding_dimension", None)
        self.dimension = int((dimension or loaded.get_sentence_embedding_dimension)())
        self.max_tokens = int(loaded.max_seq_length)
        self.vocab_size = int(loaded.tokenizer.vocab_size)
        # Learned absolute positions, when the encoder has them (not rotary ones): how many an
        # input may use, and the first (0 for BERT; after the padding index for RoBERTa, MPNet)
        table = getattr(
            getattr(self._model[0].auto_model, "embeddings", None), "position_embeddings", None
        )
        self.first_position = (
            0 if table is None or table.padding_idx is None else table.padding_idx + 1
        )
        self.positions = (
            int(table.num_embeddings) - self.first_position if table is not None else None
        )
        self._threads = torch.get_num_threads()  # the most a pass takes (OMP_NUM_THREADS)
        # What the forward pass computes, set here once and changed by a planted fault
        self._pooler = POOLERS[self.pooling]
        self._normalize = self.normalized
        self._pooled = True
        self._text_fault: Callable[[Features], None] | None = None
        self._features_fault: Callable[[Features], None] | None = None
        self.fault: FaultName | None = None
        if fault is not None:
            self._plant(fault)

    def with_fault(self, fault: FaultName) -> SentenceTransformersEngine:
        """This engine's loaded model with an engine fault planted: what one request served
        under /faults/<name> computes with (the worker serves one request at a time). A
        ValueError when the model lacks what the fault breaks."""
        view = copy.copy(self)
        view._plant(fault)
        return view

    def _plant(self, fault: FaultName) -> None:
        _check_fault_applies(fault, self)
        self.fault = fault
        self._text_fault = TEXT_FEATURES_CHANGED.get(fault)
        self._features_fault = FEATURES_CHANGED.get(fault)
        self._pooler = FAULTY_POOLERS.get(fault, self._pooler)
        self._normalize = FAULTY_NORMALIZATION.get(fault, self._normalize)
        self._pooled = fault not in UNPOOLED
        change_setting = SETTINGS_CHANGED.get(fault)
        if change_setting is not None:
            change_setting(self)

    def tokenize(self, text: str, special_tokens: bool = True) -> list[int]:
        ids = self._model.tokenizer.encode(text, add_special_tokens=special_tokens)
        return [int(t) for t in ids]

    def embed_texts(self, texts: list[str]) -> EngineOutput:
        return self._embed_in_chunks(texts, self._text_features)

    def embed_tokens(self, ids: list[list[int]]) -> EngineOutput:
        return self._embed_in_chunks(ids, self._id_features)

    def _embed_in_chunks(
        self, items: Sequence[Any], features_of: Callable[[list[Any]], dict[str, Any]]
    ) -> EngineOutput:
        """Chunks of CHUNK_ROWS, each padded to its own longest input. A correct engine takes
        the inputs longest first, as sentence-transformers does, so that inputs of like length
        share a chunk and little of a pass is padding; a faulty one keeps the order it was
        given: the faults that misuse padding must see the batch as sent."""
        order = list(range(len(items)))
        if self.fault is None:
            order.sort(key=lambda i: -len(items[i]))
        parts = [
            self._embed(features_of([items[i] for i in order[start : start + CHUNK_ROWS]]))
            for start in range(0, len(order), CHUNK_ROWS)
        ]
        if not parts:
            return EngineOutput(np.zeros((0, self.dimension), dtype=np.float32), [], [])
        matrix = np.concatenate([part.matrix for part in parts])
        rows = [count for part in parts for count in part.rows]
        tokens = [count for part in parts for count in part.tokens]
        if self.fault is None:  # back to the order asked for (one row per input here)
            given = np.argsort(order)
            matrix, tokens = matrix[given], [tokens[i] for i in given]
        return EngineOutput(np.ascontiguousarray(matrix), rows, tokens)

    def _text_features(self, texts: list[str]) -> dict[str, Any]:
        """The model's own preprocessing, truncating at this engine's context (which a planted
        fault may cut short) rather than the loaded model's, which every fault shares."""
        model = self._model
        own, model.max_seq_length = model.max_seq_length, self.max_tokens
        try:
            features = cast(Features, model.preprocess(texts))
        finally:
            model.max_seq_length = own
        if self._text_fault is not None:
            self._text_fault(features)
        return features

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

    def _embed(self, features: Features) -> EngineOutput:
        if self._features_fault is not None:
            self._features_fault(features)
        threads = threads_for_pass(features["input_ids"].numel(), self._threads)
        if threads != torch.get_num_threads():  # a change of count rebuilds torch's thread pool
            torch.set_num_threads(threads)
        with torch.inference_mode():
            tokens = self._model[0](features)["token_embeddings"]  # [B, T, H]
        mask = features["attention_mask"]
        lengths = [int(n) for n in mask.sum(dim=1)]
        if not self._pooled:  # the per-token fault: each input's token states
            rows = [tokens[i, :n] for i, n in enumerate(lengths)]
            return EngineOutput(torch.cat(rows).numpy(), lengths, lengths)
        pooled = self._pooler(tokens, mask)
        with torch.inference_mode():
            for module in self._head:
                pooled = module({"sentence_embedding": pooled})["sentence_embedding"]
        if self._normalize:
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        matrix = np.ascontiguousarray(pooled.numpy(), dtype=np.float32)
        return EngineOutput(matrix, [1] * len(lengths), lengths)


def _layout_of_loaded(path: str, model: Any) -> ModelLayout:
    """The folder's layout, once sentence-transformers is seen to have loaded those very
    modules (the head is taken from the loaded pipeline by the positions read here) and its
    pooling is one this engine computes."""
    layout = read_layout(path)
    loaded = tuple(type(module).__name__ for module in model)
    if loaded != layout.kinds:
        raise ValueError(
            f"{path}: modules.json declares {', '.join(layout.kinds)} but sentence-transformers "
            f"loaded {', '.join(loaded)}"
        )
    if layout.pooling not in POOLINGS:
        raise ValueError(
            f"{path}: pooling {layout.pooling or 'absent'}; this engine pools with "
            f"{', '.join(POOLINGS)}"
        )
    return layout


def linear_layers_on_onednn(module: torch.nn.Module) -> None:
    """Run the encoder's Linear layers on oneDNN instead of MKL, torch's default for float32
    matrix products on x86. MKL takes no AVX-512 path on AMD CPUs; oneDNN picks its kernels by
    instruction set, as vLLM's CPU backend does. Measured on this project's 2-core AMD EPYC
    machines (the bundled model, 80-token inputs, 2 threads): a forward pass of 1 / 15 / 64
    inputs 20.5 -> 13.4 / 197 -> 120 / 930 -> 661 ms; the vectors move by at most 1.5e-7.
    A torch without oneDNN, or without this helper, keeps MKL: slower, the same vectors."""
    if not torch.backends.mkldnn.is_available():  # type: ignore[no-untyped-call]
        return
    with warnings.catch_warnings():  # its modules are TorchScript, which torch now deprecates
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            from torch.utils.mkldnn import to_mkldnn
        except (ImportError, AttributeError):
            return
        _replace_linear_layers(module, to_mkldnn)


def _replace_linear_layers(module: torch.nn.Module, convert: Callable[..., Any]) -> None:
    for name, child in module.named_children():
        if isinstance(child, torch.nn.Linear):
            setattr(module, name, convert(child))
        else:
            _replace_linear_layers(child, convert)


def _check_fault_applies(fault: FaultName, engine: SentenceTransformersEngine) -> None:
    """A fault planted in a model without the feature it breaks would change nothing: refuse it."""
    pooling, positions, context = engine.pooling, engine.positions, engine.max_tokens
    applies_to: dict[FaultName, tuple[bool, str]] = {
        "cls-pooling": (pooling != "cls", "a pooling other than CLS"),
        "mean-pooling": (pooling != "mean", "a pooling other than mean"),
        "padding-unmasked": (pooling == "mean", "mean pooling"),
        "last-token-padded": (pooling == "lasttoken", "last-token pooling"),
        "no-normalize": (engine.normalized, "a Normalize module"),
        "forced-normalize": (not engine.normalized, "no Normalize module"),
        "dense-skipped": (bool(engine._head), "a Dense layer"),
        "positions-shifted": (
            positions is not None and engine.first_position == 0 and positions >= context + 2,
            "learned positions counted from 0 (BERT's), two more than its context",
        ),
        "context-of-positions": (
            positions is not None and positions > context,
            "learned positions past its context",
        ),
    }
    applies, feature = applies_to.get(fault, (True, ""))
    if not applies:
        raise ValueError(f"fault {fault!r} needs a model with {feature}")
