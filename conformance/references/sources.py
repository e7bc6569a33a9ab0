"""Where reference vectors come from: a sentence-transformers model run here, or a live endpoint.

Both produce a :class:`Recording` over the same corpus, so the suite compares a server with a
golden file, a local model or a second server (e.g. bare vLLM) in exactly the same way. The
heavy import (sentence-transformers, torch) happens only when that source is used.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform
import shlex
import sys
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from conformance import __version__
from conformance.checks.vectors import check_unit_norm
from conformance.client import EmbeddingsClient, EndpointError, Exchange, HttpClient
from conformance.corpus import Case
from conformance.references.recording import Recording, corpus_hash
from conformance.references.shape import observed_behaviour
from conformance.runtime_dir import no_torch_cache_folder
from conformance.tolerances import REFERENCE_NORM_ATOL
from conformance.variants import file_sha256, tree_digest

BATCH = 16
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


class RecordError(Exception):
    """The source could not produce a reference for the corpus."""


def _versions(*names: str) -> dict[str, str]:
    found = {"python": platform.python_version(), "embedding-conformance": __version__}
    for name in names:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[name] = metadata.version(name)
    return found


def weights_sha256(model_dir: str | Path) -> str | None:
    """sha256 of the model's weight file, so a golden names exactly the weights it came from."""
    for name in WEIGHT_FILES:
        path = Path(model_dir) / name
        if path.is_file():
            return file_sha256(path)
    return None


def model_card(model_dir: str | Path) -> dict[str, Any]:
    """Pooling, normalization and context length as a sentence-transformers folder declares
    them (modules.json, the pooling config, sentence_bert_config.json); empty if it has none."""
    root = Path(model_dir)
    try:
        modules = json.loads((root / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    card: dict[str, Any] = {"normalized": any(m["type"].endswith("Normalize") for m in modules)}
    for module in modules:
        if module["type"].endswith("Pooling"):
            config = json.loads((root / module["path"] / "config.json").read_text("utf-8"))
            card["pooling"] = pooling_mode(config)
    try:
        bert = json.loads((root / "sentence_bert_config.json").read_text(encoding="utf-8"))
        card["max_tokens"] = bert.get("max_seq_length")
    except (OSError, ValueError):
        pass
    return card


def pooling_mode(config: dict[str, Any]) -> str:
    """sentence-transformers' name for a Pooling config's mode ("mean", "cls", "lasttoken",
    "max", "weightedmean", "mean_sqrt_len_tokens"): its ``pooling_mode`` string, else the
    ``pooling_mode_*`` flags that are on (joined with "+")."""
    if isinstance(config.get("pooling_mode"), str):
        return str(config["pooling_mode"])
    flags = [k.removeprefix("pooling_mode_") for k, on in config.items() if on is True]
    names = {"cls_token": "cls", "mean_tokens": "mean", "max_tokens": "max"}
    return "+".join(names.get(flag, flag) for flag in flags)


def _chunks(cases: Sequence[Case], size: int) -> Iterator[Sequence[Case]]:
    for start in range(0, len(cases), size):
        yield cases[start : start + size]


def _command() -> str:
    return shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]])


def _manifest(cases: Sequence[Case], **fields: Any) -> dict[str, Any]:
    return {
        **fields,
        "dtype": "float32",
        "corpus": {"name": "reference", "sha256": corpus_hash(cases), "cases": len(cases)},
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": _command(),
    }


def record_sentence_transformers(
    model_dir: str, cases: Sequence[Case], *, name: str | None = None, progress: bool = True
) -> Recording:
    """Vectors from sentence-transformers in this process (inputs past the model's context are
    truncated by it, as it always does)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        with no_torch_cache_folder():
            from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise RecordError(
            f"sentence-transformers is not installed ({exc}): "
            "pip install 'embedding-conformance[server]'"
        ) from None
    if not Path(model_dir).is_dir():
        raise RecordError(f"{model_dir}: not a sentence-transformers model folder")
    model = SentenceTransformer(model_dir, device="cpu")
    rows = []
    with tqdm(
        total=len(cases), desc="sentence-transformers", unit="case", disable=not progress
    ) as bar:
        for chunk in _chunks(cases, BATCH):
            rows.append(np.asarray(model.encode([c.text for c in chunk]), dtype=np.float32))
            bar.update(len(chunk))
    card = model_card(model_dir)
    tokenizer = model.tokenizer
    tokens = {c.id: [int(t) for t in tokenizer.encode(c.text)] for c in cases}  # no truncation
    manifest = _manifest(
        cases,
        model=name or model_name(model_dir),
        source="sentence-transformers",
        origin=str(model_dir),
        weights_sha256=weights_sha256(model_dir),
        model_sha256=tree_digest(Path(model_dir)),
        libraries=_versions("sentence-transformers", "transformers", "torch", "numpy"),
        pooling=card.get("pooling", "unknown"),
        normalized=card.get("normalized", False),
        max_tokens=model.max_seq_length,
        over_context="truncate",
        case_ids=[c.id for c in cases],
        rejected={},
        special_tokens=int(tokenizer.num_special_tokens_to_add()),
    )
    return Recording(manifest, np.concatenate(rows), tokens)


def model_name(model_dir: str | Path) -> str:
    """The model's own name from its README title, else the folder's name."""
    readme = Path(model_dir) / "README.md"
    if readme.is_file():
        for line in readme.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("# "):
                return line[2:].strip().split("/")[-1]
    return Path(model_dir).name


def _embed_one(client: EmbeddingsClient, case: Case) -> Exchange:
    try:
        return client.embed(case.text, encoding_format="float")
    except EndpointError as exc:
        raise RecordError(f"case {case.id!r}: no answer: {exc}") from None


def record_endpoint(
    client: EmbeddingsClient,
    cases: Sequence[Case],
    *,
    model_dir: str | None = None,
    progress: bool = True,
    behaviour: bool = True,
) -> Recording:
    """Vectors from a live endpoint, asked for float output in batches. A batch that is not
    answered is retried case by case; a case the endpoint rejects with a 4xx (e.g. past its
    context) is recorded as rejected, anything else stops the recording. ``behaviour``: also
    record the answers' shape and the error answers (for a baseline)."""
    vectors: dict[str, np.ndarray] = {}
    rejected: dict[str, str] = {}
    with tqdm(total=len(cases), desc=client.model, unit="case", disable=not progress) as bar:
        for chunk in _chunks(cases, BATCH):
            try:
                exchange = client.embed([c.text for c in chunk], encoding_format="float")
            except EndpointError as exc:
                raise RecordError(
                    f"no answer from {client.endpoint.embeddings_url}: {exc}"
                ) from None
            answers = (
                [exchange] * len(chunk) if exchange.ok else [_embed_one(client, c) for c in chunk]
            )
            for position, (case, answer) in enumerate(zip(chunk, answers, strict=True)):
                if answer.ok and answer.batch is not None:
                    index = position if answer is exchange else 0
                    vectors[case.id] = _vector(answer, index, case)
                elif 400 <= answer.status < 500:
                    rejected[case.id] = answer.describe()[:200]
                else:
                    raise RecordError(f"case {case.id!r}: {answer.describe()}")
            bar.update(len(chunk))
    recorded = [c.id for c in cases if c.id in vectors]
    matrix = _stack([vectors[i] for i in recorded])
    card = model_card(model_dir) if model_dir else {}
    tokens, special_tokens = _endpoint_tokens(client, cases)
    over = past_context(cases, tokens, card.get("max_tokens"))
    manifest = _manifest(
        cases,
        model=client.model,
        source="endpoint",
        origin=client.endpoint.embeddings_url,
        server=server_version(client),
        weights_sha256=weights_sha256(model_dir) if model_dir else None,
        model_sha256=tree_digest(Path(model_dir)) if model_dir else None,
        libraries=_versions(),
        pooling=card.get("pooling", "unknown"),
        normalized=check_unit_norm(list(matrix), REFERENCE_NORM_ATOL).passed,
        max_tokens=card.get("max_tokens"),
        over_context="reject" if over and all(i in rejected for i in over) else "truncate",
        case_ids=recorded,
        rejected=rejected,
        special_tokens=special_tokens,
        behaviour=observed_behaviour(client) if behaviour else None,
    )
    return Recording(manifest, matrix, tokens)


def past_context(
    cases: Sequence[Case], tokens: dict[str, list[int]] | None, max_tokens: int | None
) -> list[str]:
    """The over-context cases past this model's context: all of them unless the model card
    gives a context and the endpoint counted a case's tokens. (The tag is MiniLM's 256 tokens;
    nomic-embed-text-v1.5 reads 2,048, and refusing ctx-past-2100 alone is its over-context
    rejection.)"""
    counts = tokens or {}
    return [
        c.id
        for c in cases
        if "over-context" in c.tags
        and (max_tokens is None or c.id not in counts or len(counts[c.id]) > max_tokens)
    ]


def _endpoint_tokens(
    client: EmbeddingsClient, cases: Sequence[Case]
) -> tuple[dict[str, list[int]] | None, int | None]:
    """Each case's token ids from the endpoint's own /tokenize route, and how many special
    tokens it adds; (None, None) when it has no such route."""
    probe = client.tokenize("hello")
    bare = client.tokenize("hello", special_tokens=False)
    if probe is None or bare is None:
        return None, None
    tokens = {c.id: ids for c in cases if (ids := client.tokenize(c.text)) is not None}
    return tokens, len(probe) - len(bare)


def _vector(exchange: Exchange, index: int, case: Case) -> np.ndarray:
    assert exchange.batch is not None
    items = exchange.batch.items
    if index >= len(items) or items[index].vector is None:
        raise RecordError(f"case {case.id!r}: no vector in the answer ({exchange.describe()})")
    vector = items[index].vector
    assert vector is not None
    return vector


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    if not rows:
        raise RecordError("the endpoint accepted none of the corpus")
    lengths = {len(r) for r in rows}
    if len(lengths) > 1:
        raise RecordError(f"vectors of different lengths {sorted(lengths)}: not an embedding")
    return np.stack(rows).astype(np.float32)


def server_version(client: HttpClient) -> str | None:
    """What a vLLM-style server says at GET /version (beside /v1), if it says anything."""
    base = client.endpoint.api_base
    if base is None:
        return None
    try:
        reply = client.send("GET", base.removesuffix("/v1") + "/version")
        version = json.loads(reply.raw).get("version") if reply.status == 200 else None
    except (EndpointError, ValueError, AttributeError):
        return None
    return str(version) if version else None
