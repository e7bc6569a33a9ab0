"""A recording of reference vectors over the reference corpus: what a golden directory holds.

A recording directory has these files:

    manifest.json  what made the vectors (model, weights hash, libraries, dtype, pooling,
                   normalization, context length, corpus hash, date, command), the row order
                   (``case_ids``), the cases the source refused (``rejected``), how many
                   special tokens its tokenizer adds (``special_tokens``), and the sha256 (and
                   shape) of every other file
    vectors.npy    float32 ``[len(case_ids), dim]``, one row per accepted case
    tokens.json    the source's token ids of each case, special tokens included (when the
                   source has a tokenizer): the truth for token counts and token-id input

Writing is all-or-nothing: files go to a temporary sibling directory that is renamed into
place, so an interrupted recording never leaves a half-written golden behind.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from conformance.corpus import Case
from conformance.files import staging_dir
from conformance.wire import Matrix, Vector

FORMAT = 1
MANIFEST = "manifest.json"
VECTORS = "vectors.npy"
TOKENS = "tokens.json"

StoredVectors = npt.NDArray[np.float32]  # as kept on disk; read back as float64


class GoldenError(Exception):
    """A golden directory that is missing, incomplete, or does not match its manifest."""


def corpus_hash(cases: Sequence[Case]) -> str:
    """sha256 over the case ids and texts: a recording is only valid for the same corpus."""
    canonical = json.dumps([[c.id, c.text] for c in cases], ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Recording:
    """Reference vectors by case id, with the manifest that says where they come from."""

    manifest: dict[str, Any]
    vectors: StoredVectors
    tokens: dict[str, list[int]] | None = None  # case id -> token ids; None: no tokenizer

    @cached_property
    def rows(self) -> dict[str, int]:
        return {case_id: row for row, case_id in enumerate(self.manifest["case_ids"])}

    @property
    def rejected(self) -> dict[str, str]:
        """Cases the source refused (e.g. past its context), with its reason."""
        return dict(self.manifest.get("rejected", {}))

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def normalized(self) -> bool:
        return bool(self.manifest["normalized"])

    @property
    def model(self) -> str:
        return str(self.manifest["model"])

    @property
    def source(self) -> str:
        """Where the vectors came from, for messages: the library and its version, or the
        endpoint and the version it reported."""
        m = self.manifest
        if m["source"] == "sentence-transformers":
            return f"sentence-transformers {m['libraries'].get('sentence-transformers', '')}"
        server = f", server version {m['server']}" if m.get("server") else ""
        return f"endpoint {m['origin']}{server}"

    def matrix(self, case_ids: Sequence[str]) -> Matrix:
        """Rows for these cases, in this order (KeyError for a case the source rejected)."""
        return self.vectors[[self.rows[i] for i in case_ids]].astype(np.float64)

    def vector(self, case_id: str) -> Vector | None:
        row = self.rows.get(case_id)
        return None if row is None else self.vectors[row].astype(np.float64)

    def token_ids(self, case_id: str) -> list[int] | None:
        """The source's token ids of a case (special tokens included), if it recorded them."""
        return None if self.tokens is None else self.tokens.get(case_id)

    @property
    def max_tokens(self) -> int | None:
        """The source model's context length in tokens, if the manifest states it."""
        count = self.manifest.get("max_tokens")
        return count if isinstance(count, int) else None

    @property
    def special_tokens(self) -> int | None:
        """How many special tokens the source's tokenizer adds to every text ([CLS], [SEP])."""
        count = self.manifest.get("special_tokens")
        return count if isinstance(count, int) else None


def _npy_bytes(vectors: StoredVectors) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(vectors, dtype="<f4"), allow_pickle=False)
    return buffer.getvalue()


def _tokens_bytes(tokens: dict[str, list[int]]) -> bytes:
    """One line per case: readable, and diffs stay small when a tokenizer changes."""
    lines = [f"{json.dumps(case_id)}: {json.dumps(ids)}" for case_id, ids in tokens.items()]
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


def check_writable(directory: Path, *, overwrite: bool = False) -> None:
    """Refuse to replace a non-empty directory unless told (checked before a long recording)."""
    if directory.exists() and any(directory.iterdir()) and not overwrite:
        raise GoldenError(f"{directory} exists and is not empty (use --force to replace it)")


def save(recording: Recording, directory: Path, *, overwrite: bool = False) -> None:
    """Write the recording to ``directory`` atomically; refuse to replace one unless told."""
    directory = Path(directory)
    check_writable(directory, overwrite=overwrite)
    data = {VECTORS: _npy_bytes(recording.vectors)}
    if recording.tokens is not None:
        data[TOKENS] = _tokens_bytes(recording.tokens)
    files: dict[str, dict[str, Any]] = {
        name: {"sha256": sha256_bytes(b)} for name, b in data.items()
    }
    files[VECTORS].update(shape=list(recording.vectors.shape), dtype="<f4")
    manifest = {**recording.manifest, "format": FORMAT, "files": files}
    staging = staging_dir(directory)
    try:
        for name, content in data.items():
            (staging / name).write_bytes(content)
        text = json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
        (staging / MANIFEST).write_text(text, encoding="utf-8")
        _swap_in(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _swap_in(staging: Path, directory: Path) -> None:
    """Put ``staging`` where ``directory`` is; an old golden is kept until the new one is in."""
    if not directory.exists():
        os.replace(staging, directory)
        return
    retired = directory.with_name(f".{directory.name}-old-{os.getpid()}")
    os.replace(directory, retired)
    try:
        os.replace(staging, directory)
    except BaseException:
        os.replace(retired, directory)
        raise
    shutil.rmtree(retired)


def problems(directory: Path) -> list[str]:
    """Everything wrong with a golden directory (empty when it matches its manifest)."""
    directory = Path(directory)
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [f"{directory}: no {MANIFEST}"]
    except ValueError as exc:
        return [f"{directory / MANIFEST}: not JSON ({exc})"]
    if not isinstance(manifest, dict):
        return [f"{directory / MANIFEST}: not a JSON object"]
    found = []
    if manifest.get("format") != FORMAT:
        found.append(f"format {manifest.get('format')!r}, this version reads {FORMAT}")
    for name, expected in manifest.get("files", {}).items():
        path = directory / name
        if not path.is_file():
            found.append(f"{name}: missing")
            continue
        data = path.read_bytes()
        if sha256_bytes(data) != expected["sha256"]:
            found.append(f"{name}: sha256 differs from the manifest (file changed or damaged)")
            continue
        if "shape" not in expected:  # not an array
            continue
        array = np.load(io.BytesIO(data), allow_pickle=False)
        if list(array.shape) != expected["shape"] or array.dtype.str != expected["dtype"]:
            found.append(
                f"{name}: {array.dtype.str} {list(array.shape)}, "
                f"manifest says {expected['dtype']} {expected['shape']}"
            )
    ids = manifest.get("case_ids", [])
    shape = manifest.get("files", {}).get(VECTORS, {}).get("shape")
    if VECTORS not in manifest.get("files", {}):
        found.append(f"manifest lists no {VECTORS}")
    elif shape and shape[0] != len(ids):
        found.append(f"{len(ids)} case ids for {shape[0]} rows")
    if len(set(ids)) != len(ids):
        found.append("duplicate case ids")
    return [f"{directory}: {p}" for p in found]


def load(directory: Path) -> Recording:
    """Read a golden directory, verified against its manifest."""
    found = problems(directory)
    if found:
        raise GoldenError("; ".join(found))
    manifest = json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))
    vectors = np.load(Path(directory) / VECTORS, allow_pickle=False)
    tokens = None
    if TOKENS in manifest["files"]:
        tokens = json.loads((Path(directory) / TOKENS).read_text(encoding="utf-8"))
    return Recording(manifest, vectors, tokens)
