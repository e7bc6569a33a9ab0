"""Bare vLLM as an engine: its offline ``LLM`` on the CPU, with the pooling task always named.

The story this project exists for came from an engine whose pooling task was left to a default
that changed (per-token, un-normalized output). So the correct engine names its task
("embed"), and the per-token fault is produced by vLLM itself ("token_embed"), not faked here.

vLLM is imported only inside this module (``load_engine`` imports it lazily), so the package
works without it. vLLM starts its engine in child processes (the only mode its CPU backend
supports), so the process that builds a ``VllmEngine`` needs an ``if __name__ == "__main__"``
guard; the reference server's worker has one.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from conformance.server.engines import ENGINE_FAULTS, EngineOutput
from conformance.server.faults import FaultName
from conformance.server.model_folder import read_layout
from conformance.server.model_names import resolve_model

# Each fault is one setting of vLLM's own PoolerConfig (checked against vLLM 0.32's source).
# "use_activation" is what 0.32 calls normalization for embeddings ("normalize" was removed).
# token_embed normalizes every token row by default; the real bug returned raw hidden states,
# so the per-token fault turns that off too.
_POOLER_SETTINGS: dict[FaultName | None, dict[str, Any]] = {
    None: {"task": "embed"},
    "no-normalize": {"task": "embed", "use_activation": False},
    "cls-pooling": {"task": "embed", "pooling_type": "CLS"},
    "mean-pooling": {"task": "embed", "pooling_type": "MEAN"},
    "forced-normalize": {"task": "embed", "use_activation": True},
    "per-token": {"task": "token_embed", "use_activation": False},
}


def pooler_settings(fault: FaultName | None) -> dict[str, Any]:
    """The PoolerConfig arguments that give ``fault`` (None: the correct engine)."""
    if fault in _POOLER_SETTINGS:
        return _POOLER_SETTINGS[fault]
    if fault in ENGINE_FAULTS:  # e.g. padding-unmasked: vLLM packs sequences, it never pads;
        # dense-skipped: vLLM loads the projection itself
        raise ValueError(
            f"fault {fault!r} is not available with the vllm engine; "
            "use --engine sentence-transformers"
        )
    raise ValueError(f"unknown engine fault {fault!r} (one of {', '.join(ENGINE_FAULTS)})")


def _prepare_environment() -> None:
    """Settings vLLM reads at import; a caller's own values win."""
    # The KV cache is sized in GiB on the CPU; an encoder needs next to none of it.
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    # No hub on these machines: fail at once instead of retrying the network.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # vLLM logs to stdout by default; a worker's stdout is not a log.
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")


def _start_llm(path: str, settings: dict[str, Any], enforce_eager: bool) -> Any:
    _prepare_environment()
    from vllm import LLM  # type: ignore[import-not-found, unused-ignore]
    from vllm.config import PoolerConfig  # type: ignore[import-not-found, unused-ignore]

    # float32 like the sentence-transformers reference. Eager mode skips torch.compile: on
    # this 2-core CPU it starts ~7 s sooner (~14 s cold) and runs ~10% slower per batch.
    return LLM(
        model=path,
        runner="pooling",
        dtype="float32",
        enforce_eager=enforce_eager,
        pooler_config=PoolerConfig(**settings),
    )


class VllmEngine:
    """Embeddings from vLLM; ``fault`` selects a bug planted through vLLM's PoolerConfig."""

    def __init__(
        self,
        model: str | None,
        fault: FaultName | None,
        *,
        enforce_eager: bool = True,
        resolved: tuple[str, str] | None = None,
    ) -> None:
        """``resolved``: what ``resolve_model(model)`` gave, when the caller already asked."""
        settings = pooler_settings(fault)  # before the slow start: a bad fault fails at once
        self.model_name, path = resolved or resolve_model(model)
        # Unit-length output, so the worker renormalizes after cutting to 'dimensions'.
        self.normalized = read_layout(path).normalized  # before the slow start, as above
        self.fault = fault
        self._task: str = settings["task"]
        self._llm = _start_llm(path, settings, enforce_eager)
        config = self._llm.model_config
        self.dimension = int(config.embedding_size)  # follows a Dense projection if any
        self.max_tokens = int(config.max_model_len)  # sentence-transformers' max_seq_length
        self.vocab_size = int(config.get_vocab_size())
        self._lower_case = bool((config.encoder_config or {}).get("do_lower_case", False))
        self._tokenizer = self._llm.get_tokenizer()
        self._lock = threading.Lock()  # one LLM must not be driven from two threads at once

    def tokenize(self, text: str, special_tokens: bool = True) -> list[int]:
        """The ids vLLM's text path builds (special tokens on), before any truncation."""
        if self._lower_case:  # vLLM lower-cases before tokenizing for such models
            text = text.lower()
        with self._lock:
            ids = self._tokenizer.encode(text, add_special_tokens=special_tokens)
        return [int(token) for token in ids]

    def embed_texts(self, texts: list[str]) -> EngineOutput:
        # vLLM rejects over-long input where sentence-transformers truncates. Naming a count
        # but no side lets the tokenizer truncate, which keeps [CLS] ... [SEP] as
        # sentence-transformers does; naming a side would cut the ids after and lose [SEP].
        return self._encode(texts, {"truncate_prompt_tokens": self.max_tokens})

    def embed_tokens(self, ids: list[list[int]]) -> EngineOutput:
        # Ids are taken as given (vLLM's TokensPrompt), cut to the context like the
        # sentence-transformers engine does.
        prompts = [{"prompt_token_ids": [int(t) for t in seq[: self.max_tokens]]} for seq in ids]
        return self._encode(prompts, None)

    def _encode(self, prompts: list[Any], tokenization: dict[str, Any] | None) -> EngineOutput:
        if not prompts:
            return EngineOutput(np.zeros((0, self.dimension), dtype=np.float32), [], [])
        with self._lock:
            outputs = self._llm.encode(
                prompts, pooling_task=self._task, tokenization_kwargs=tokenization, use_tqdm=False
            )
        # "embed" gives a [dim] vector per input, "token_embed" a [n_tokens, dim] matrix.
        blocks = [np.atleast_2d(np.asarray(o.outputs.data, dtype=np.float32)) for o in outputs]
        tokens = [len(o.prompt_token_ids) for o in outputs]
        matrix = np.ascontiguousarray(np.concatenate(blocks), dtype=np.float32)
        return EngineOutput(matrix, [len(block) for block in blocks], tokens)
