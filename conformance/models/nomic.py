"""nomic-embed-text-v1.5's GGUF (its authors' f16 file) as a model folder that
sentence-transformers and vLLM load: safetensors in the original nomic-bert layout, float32.

The conversion is exact: every f16 weight is upcast to the float32 of the same value, and the
tensors are only renamed. So the folder's vectors are "the upstream weights rounded to f16,
computed in fp32", what a GGUF server of that file computes in fp32. Everything the folder says
about the model (sizes, context, rotary base, tokenizer) is read from the GGUF, not assumed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from conformance.models import gguf
from conformance.variants import (
    NORMALIZE,
    POOLING,
    TRANSFORMER,
    module_entry,
    pooling_flags,
    safetensors_header,
)

ARCHITECTURE = "nomic-bert"
# GGUF tensor name -> the original checkpoint's (vLLM and transformers map those to their own)
TOP_LEVEL = {
    "token_embd.weight": "embeddings.word_embeddings.weight",
    "token_types.weight": "embeddings.token_type_embeddings.weight",
    "token_embd_norm.weight": "emb_ln.weight",
    "token_embd_norm.bias": "emb_ln.bias",
}
PER_LAYER = {
    "attn_qkv.weight": "attn.Wqkv.weight",
    "attn_output.weight": "attn.out_proj.weight",
    "attn_output_norm.weight": "norm1.weight",
    "attn_output_norm.bias": "norm1.bias",
    # SwiGLU: down(silu(fc12 x) * fc11 x); llama.cpp's gguf names fc11 ffn_up, fc12 ffn_gate
    "ffn_up.weight": "mlp.fc11.weight",
    "ffn_gate.weight": "mlp.fc12.weight",
    "ffn_down.weight": "mlp.fc2.weight",
    "layer_output_norm.weight": "norm2.weight",
    "layer_output_norm.bias": "norm2.bias",
}
MEAN_POOLING = 1  # llama.cpp's pooling_type
WORD_START = "\u2581"  # how llama.cpp's BERT vocabulary marks the first piece of a word


def tensor_names(layers: int) -> dict[str, str]:
    """Every GGUF tensor of a ``layers``-layer nomic-bert, with its name in the folder."""
    names = dict(TOP_LEVEL)
    for layer in range(layers):
        for ours, theirs in PER_LAYER.items():
            names[f"blk.{layer}.{ours}"] = f"encoder.layers.{layer}.{theirs}"
    return names


def convert(source: Path, folder: Path) -> None:
    """Write the model folder of the GGUF ``source`` into the (empty, existing) ``folder``."""
    model = gguf.read(source)
    meta = model.metadata
    if meta.get("general.architecture") != ARCHITECTURE:
        raise ValueError(f"{source.name}: not a {ARCHITECTURE} GGUF")
    if meta.get(f"{ARCHITECTURE}.pooling_type") != MEAN_POOLING:
        raise ValueError(f"{source.name}: its pooling is not mean pooling")
    if meta.get(f"{ARCHITECTURE}.attention.causal", False):
        raise ValueError(f"{source.name}: a causal {ARCHITECTURE} is not an embedding encoder")
    if meta.get("tokenizer.ggml.model") != "bert":
        raise ValueError(f"{source.name}: its tokenizer is not BERT's WordPiece")
    names = tensor_names(int(meta[f"{ARCHITECTURE}.block_count"]))
    if set(model.tensors) != set(names):
        extra, missing = set(model.tensors) - set(names), set(names) - set(model.tensors)
        raise ValueError(f"{source.name}: unexpected tensors {sorted(extra)}, {sorted(missing)}")
    tensors = {names[name]: array for name, array in model.tensors.items()}
    _write_float32(folder / "model.safetensors", tensors)
    tokens = [wordpiece(token) for token in meta["tokenizer.ggml.tokens"]]
    (folder / "vocab.txt").write_text("".join(f"{t}\n" for t in tokens), encoding="utf-8")
    for name, content in _configuration(meta, len(tokens)).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")


def wordpiece(token: str) -> str:
    """A GGUF BERT token as vocab.txt spells it: llama.cpp marks a word's first piece with
    "\u2581" and writes a continuation without its "##"; "[...]" tokens are kept as they are."""
    if token.startswith("[") and token.endswith("]"):
        return token
    return token[1:] if token.startswith(WORD_START) else f"##{token}"


def _write_float32(path: Path, tensors: Mapping[str, np.ndarray]) -> None:
    """safetensors, float32, one tensor at a time (the model is never twice in memory)."""
    with path.open("wb") as out:
        out.write(safetensors_header(dict(tensors)))
        for name in sorted(tensors):
            out.write(np.ascontiguousarray(tensors[name], dtype="<f4").tobytes())


def _configuration(meta: Mapping[str, Any], vocabulary: int) -> dict[str, Any]:
    """config.json (nomic-bert's keys, which vLLM reads, beside transformers' own names) and the
    tokenizer's and sentence-transformers' files."""
    arch = ARCHITECTURE
    hidden, layers = int(meta[f"{arch}.embedding_length"]), int(meta[f"{arch}.block_count"])
    heads, inner = (
        int(meta[f"{arch}.attention.head_count"]),
        int(meta[f"{arch}.feed_forward_length"]),
    )
    context, theta = int(meta[f"{arch}.context_length"]), float(meta[f"{arch}.rope.freq_base"])
    epsilon = float(np.float32(meta[f"{arch}.attention.layer_norm_epsilon"]))
    config = {
        "architectures": ["NomicBertModel"],
        "model_type": "nomic_bert",
        # nomic-bert's own names (vLLM's NomicBertModel reads these)
        "activation_function": "swiglu",
        "n_embd": hidden,
        "n_head": heads,
        "n_inner": inner,
        "n_layer": layers,
        "n_positions": context,
        "max_trained_positions": context,
        "layer_norm_epsilon": epsilon,
        "mlp_fc1_bias": False,
        "mlp_fc2_bias": False,
        "qkv_proj_bias": False,
        "rotary_emb_base": theta,
        "rotary_emb_fraction": 1.0,
        "rotary_emb_interleaved": False,
        "rotary_emb_scale_base": None,
        "causal": False,
        "prenorm": False,
        # transformers' names for the same
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "intermediate_size": inner,
        "hidden_act": "silu",
        "max_position_embeddings": context,
        "layer_norm_eps": epsilon,
        "rope_parameters": {"rope_type": "default", "rope_theta": theta},
        "vocab_size": vocabulary,
        "type_vocab_size": int(meta["tokenizer.ggml.token_type_count"]),
        "pad_token_id": int(meta["tokenizer.ggml.padding_token_id"]),
        "torch_dtype": "float32",
    }
    tokens = meta["tokenizer.ggml.tokens"]
    special = {
        "cls_token": tokens[meta["tokenizer.ggml.bos_token_id"]],
        "sep_token": tokens[meta["tokenizer.ggml.seperator_token_id"]],
        "pad_token": tokens[meta["tokenizer.ggml.padding_token_id"]],
        "unk_token": tokens[meta["tokenizer.ggml.unknown_token_id"]],
        "mask_token": "[MASK]",
    }
    return {
        "config.json": config,
        "tokenizer_config.json": {
            "tokenizer_class": "BertTokenizer",
            "do_lower_case": True,
            "model_max_length": context,
            **special,
        },
        "special_tokens_map.json": special,
        "modules.json": [
            module_entry(0, "", TRANSFORMER),
            module_entry(1, "1_Pooling", POOLING),
            module_entry(2, "2_Normalize", NORMALIZE),
        ],
        "sentence_bert_config.json": {"max_seq_length": context, "do_lower_case": False},
        "1_Pooling/config.json": {"word_embedding_dimension": hidden, "pooling_mode": "mean"}
        | pooling_flags("mean"),
    }
