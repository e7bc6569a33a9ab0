"""A golden of the weights a quantized server really serves: the GGUF file's tensors dequantized
into a copy of the model folder it was made from, then recorded with sentence-transformers.

A server of GGUF weights computes with those weights, not the original's: judged against this
golden, it differs only by its kernels' arithmetic, so the suite needs no tier wide enough to
swallow the weights' own rounding. The manifest names the GGUF (sha256, tensor types) and the
golden of the model it derives from, when one of the bundled goldens is that model's.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.corpus import Case
from conformance.files import staging_dir
from conformance.references import DEFAULT_SOURCE, bundled_models, golden_root
from conformance.references.dequantize_gguf import WEIGHTS, write_folder
from conformance.references.recording import MANIFEST, Recording
from conformance.references.sources import (
    RecordError,
    model_name,
    record_sentence_transformers,
    weights_sha256,
)
from conformance.variants import file_sha256

GGUF_MAGIC = b"GGUF"


def record_gguf(
    gguf_file: str | Path,
    base_model: str | Path,
    cases: Sequence[Case],
    *,
    scratch_beside: Path,
    name: str | None = None,
    progress: bool = True,
) -> Recording:
    """The corpus embedded by ``base_model`` with the GGUF's weights in place of its own. The
    dequantized folder is built beside ``scratch_beside`` (the golden's place: the same disk,
    room for the weights) and removed when the recording ends, however it ends."""
    gguf_file, base_model = Path(gguf_file), Path(base_model)
    _check_inputs(gguf_file, base_model)
    scratch = staging_dir(scratch_beside)
    try:
        folder = scratch / "model"
        try:
            types = write_folder(gguf_file, base_model, folder)
        except (ValueError, KeyError) as exc:  # a GGUF of another model, or not of a BERT
            raise RecordError(f"{gguf_file} does not fit {base_model}: {exc}") from None
        recording = record_sentence_transformers(
            str(folder), cases, name=name or model_name(base_model), progress=progress
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    manifest: dict[str, Any] = {
        **recording.manifest,
        "origin": str(gguf_file),
        "gguf": {
            "file": gguf_file.name,
            "sha256": file_sha256(gguf_file),
            "tensor_types": dict(sorted(Counter(types.values()).items())),
        },
        "derived_from": _derived_from(base_model),
    }
    return Recording(manifest, recording.vectors, recording.tokens)


def _check_inputs(gguf_file: Path, base_model: Path) -> None:
    if importlib.util.find_spec("gguf") is None:
        raise RecordError(
            "reading a GGUF needs llama.cpp's gguf-py: pip install 'embedding-conformance[gguf]'"
        )
    if not gguf_file.is_file():
        raise RecordError(f"--from gguf:{gguf_file}: no such file")
    with gguf_file.open("rb") as file:
        if file.read(4) != GGUF_MAGIC:
            raise RecordError(f"--from gguf:{gguf_file}: not a GGUF file (no GGUF magic)")
    if not (base_model / WEIGHTS).is_file():
        raise RecordError(
            f"--base-model {base_model}: a sentence-transformers folder with {WEIGHTS} (the model "
            "the GGUF was converted from: its tokenizer, config and pooling are used)"
        )


def _derived_from(base_model: Path) -> dict[str, Any]:
    """The base model's weights, and the bundled golden recorded from the same weights, if any:
    the fp32 reference the quantized server is also judged against at its tier."""
    weights = weights_sha256(base_model)
    same = (
        f"{model}/{DEFAULT_SOURCE}"
        for model in bundled_models()
        if weights is not None and weights == _golden_weights(model)
    )
    return {"model": str(base_model), "weights_sha256": weights, "golden": next(same, None)}


def _golden_weights(model: str) -> str | None:
    manifest = json.loads((golden_root() / model / DEFAULT_SOURCE / MANIFEST).read_text())
    weights: str | None = manifest.get("weights_sha256")
    return weights
