"""A sentence-transformers model folder whose weights are those of a quantized GGUF file.

Each tensor llama.cpp's quantizer wrote (q8_0, q4_K, q5_0, ...) is dequantized by llama.cpp's
own gguf-py and put back under its Hugging Face name, so a float32 runtime computes with the
very weights a llama.cpp server would: a correct server at that precision, whose only
difference from the original model is the rounding of its weights. BERT and nomic-bert models.

Run by path with the Python of an environment that has gguf-py and safetensors (the matrix's
llama-cpp-python environment): it imports nothing of this project. `golden record --from
gguf:FILE` imports it (gguf_golden.py) to record the golden of those weights.

    python dequantize_gguf.py MODEL.gguf MODEL_FOLDER OUT_FOLDER
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

WEIGHTS = "model.safetensors"
# Kept from the original: what llama.cpp's converter does not carry (an index buffer, and the
# pooler head that sentence-transformers never runs)
NOT_IN_GGUF = ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias")


def dequantized_weights(gguf_file: Path, original: dict) -> tuple[dict, dict[str, str]]:  # type: ignore[type-arg]
    """The original tensors with every one the GGUF holds replaced by its dequantized values,
    and the GGUF type each came from. ValueError when the two do not match tensor for tensor."""
    import gguf  # type: ignore[import-not-found,unused-ignore]  # ours (the gguf extra) or a peer's
    import numpy as np

    reader = gguf.GGUFReader(str(gguf_file))
    in_file = {tensor.name: tensor for tensor in reader.tensors}
    blocks = 1 + max(int(name.split(".")[1]) for name in in_file if name.startswith("blk."))
    names = gguf.get_tensor_name_map(architecture(reader, gguf), blocks)
    weights, types, used = dict(original), {}, set()
    for hf_name, values in original.items():
        if hf_name in NOT_IN_GGUF:
            continue
        gguf_name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if gguf_name not in in_file:
            raise ValueError(f"{hf_name}: no tensor {gguf_name} in {gguf_file}")
        tensor = in_file[gguf_name]
        restored = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
        if restored.shape != values.shape:
            raise ValueError(f"{gguf_name}: shape {restored.shape}, {hf_name} is {values.shape}")
        weights[hf_name], types[hf_name] = np.ascontiguousarray(restored), tensor.tensor_type.name
        used.add(gguf_name)
    if set(in_file) - used:
        raise ValueError(f"{gguf_file}: tensors with no place in the model: {set(in_file) - used}")
    return weights, types


def architecture(reader: Any, gguf: Any) -> Any:
    """The GGUF's model architecture, among those whose tensors map one to one onto the
    original checkpoint's (BERT's and nomic-bert's). ValueError for another."""
    field = reader.get_field("general.architecture")
    name = field.contents() if field is not None else None
    known = {"bert": gguf.MODEL_ARCH.BERT, "nomic-bert": gguf.MODEL_ARCH.NOMIC_BERT}
    if name not in known:
        raise ValueError(f"architecture {name!r}: only {', '.join(known)} are dequantized")
    return known[name]


def write_folder(gguf_file: Path, model: Path, out: Path) -> dict[str, str]:
    """``out``: a copy of ``model`` with the GGUF's weights, written whole or not at all."""
    from safetensors.numpy import load_file, save_file

    weights, types = dequantized_weights(gguf_file, load_file(str(model / WEIGHTS)))
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(model, partial, ignore=shutil.ignore_patterns(WEIGHTS, "*.bin", "*.onnx"))
    save_file(weights, str(partial / WEIGHTS), metadata={"format": "pt"})
    shutil.rmtree(out, ignore_errors=True)
    partial.replace(out)
    return types


def main(argv: list[str]) -> None:
    if len(argv) != 3:
        raise SystemExit("usage: dequantize_gguf.py MODEL.gguf MODEL_FOLDER OUT_FOLDER")
    types = write_folder(Path(argv[0]), Path(argv[1]), Path(argv[2]))
    counts = sorted(Counter(types.values()).items())
    summary = ", ".join(f"{count} {kind}" for kind, count in counts)
    print(f"{argv[2]}: {len(types)} tensors from {argv[0]} ({summary})")


if __name__ == "__main__":
    main(sys.argv[1:])
