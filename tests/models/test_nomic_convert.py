"""The nomic-bert GGUF converter, on a tiny synthetic nomic-bert GGUF (2 layers, 32 wide): every
f16 weight upcast exactly and only renamed, SwiGLU's two halves where transformers and vLLM
expect them, the vocabulary in BERT's spelling, the sizes read from the metadata, a folder
sentence-transformers loads with every weight, the same bytes on every conversion, and every
GGUF this converter does not know refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import load_file

from conformance.models import nomic
from tests.models.gguf_writer import Value, write

LAYERS, CONTEXT, HIDDEN, INNER, HEADS = 2, 64, 32, 48, 4
# llama.cpp's spelling of a BERT vocabulary: "\u2581" starts a word, a continuation is bare
TOKENS = [
    "[PAD]",
    "[unused0]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "\u2581the",
    "\u2581cat",
    "s",
    "\u2581sat",
    "\u2581on",
    "\u2581a",
    "\u2581mat",
    "\u2581dog",
    "\u2581ran",
    "\u2581.",
]
VOCAB = [
    "[PAD]",
    "[unused0]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "cat",
    "##s",
    "sat",
    "on",
    "a",
    "mat",
    "dog",
    "ran",
    ".",
]
PAD, UNK, CLS, SEP = 0, 2, 3, 4


def metadata(**changes: Value) -> dict[str, Value]:
    """The tiny model's metadata, typed as llama.cpp writes it, with ``changes`` (keys without
    the "nomic-bert." prefix are taken as they are)."""
    arch = "nomic-bert"
    meta: dict[str, Value] = {
        "general.architecture": arch,
        "general.name": "tiny nomic-bert",
        f"{arch}.block_count": np.uint32(LAYERS),
        f"{arch}.context_length": np.uint32(CONTEXT),
        f"{arch}.embedding_length": np.uint32(HIDDEN),
        f"{arch}.feed_forward_length": np.uint32(INNER),
        f"{arch}.attention.head_count": np.uint32(HEADS),
        f"{arch}.attention.layer_norm_epsilon": np.float32(1e-12),
        f"{arch}.attention.causal": False,
        f"{arch}.pooling_type": np.uint32(1),
        f"{arch}.rope.freq_base": np.float32(1000.0),
        "tokenizer.ggml.model": "bert",
        "tokenizer.ggml.tokens": TOKENS,
        "tokenizer.ggml.token_type_count": np.uint32(2),
        "tokenizer.ggml.bos_token_id": np.uint32(CLS),
        "tokenizer.ggml.seperator_token_id": np.uint32(SEP),  # sic: llama.cpp's spelling
        "tokenizer.ggml.padding_token_id": np.uint32(PAD),
        "tokenizer.ggml.unknown_token_id": np.uint32(UNK),
    }
    for key, value in changes.items():
        meta[key if key.startswith(("general.", "tokenizer.")) else f"{arch}.{key}"] = value
    return meta


def weights(seed: int = 0) -> dict[str, np.ndarray]:
    """A BERT-like SwiGLU encoder's tensors by their GGUF names, in numpy's dimension order:
    matrices F16, norms F32 (as in the authors' file), random values."""
    rng = np.random.default_rng(seed)

    def f16(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float16)

    def f32(*shape: int, around: float = 0.0) -> np.ndarray:
        return (around + rng.standard_normal(shape) * 0.1).astype(np.float32)

    tensors = {
        "token_embd.weight": f16(len(TOKENS), HIDDEN),
        "token_types.weight": f16(2, HIDDEN),
        "token_embd_norm.weight": f32(HIDDEN, around=1.0),
        "token_embd_norm.bias": f32(HIDDEN),
    }
    for layer in range(LAYERS):
        block = f"blk.{layer}"
        tensors |= {
            f"{block}.attn_qkv.weight": f16(3 * HIDDEN, HIDDEN),
            f"{block}.attn_output.weight": f16(HIDDEN, HIDDEN),
            f"{block}.attn_output_norm.weight": f32(HIDDEN, around=1.0),
            f"{block}.attn_output_norm.bias": f32(HIDDEN),
            f"{block}.ffn_up.weight": f16(INNER, HIDDEN),
            f"{block}.ffn_gate.weight": f16(INNER, HIDDEN),
            f"{block}.ffn_down.weight": f16(HIDDEN, INNER),
            f"{block}.layer_output_norm.weight": f32(HIDDEN, around=1.0),
            f"{block}.layer_output_norm.bias": f32(HIDDEN),
        }
    return tensors


def convert(
    tmp_path: Path,
    meta: dict[str, Value] | None = None,
    tensors: dict[str, np.ndarray] | None = None,
    name: str = "model",
) -> Path:
    """The folder converted from a GGUF of ``meta`` and ``tensors`` (the tiny model's unless
    given)."""
    source = tmp_path / f"{name}.gguf"
    write(source, metadata() if meta is None else meta, weights() if tensors is None else tensors)
    folder = tmp_path / name
    folder.mkdir()
    nomic.convert(source, folder)
    return folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return convert(tmp_path_factory.mktemp("nomic"))


def config_of(folder: Path, name: str = "config.json") -> Any:
    return json.loads((folder / name).read_text(encoding="utf-8"))


def test_every_tensor_is_its_f16_value_upcast_exactly_under_its_nomic_bert_name(
    folder: Path,
) -> None:
    converted = load_file(str(folder / "model.safetensors"))
    names = nomic.tensor_names(LAYERS)
    assert sorted(converted) == sorted(names.values())
    for gguf_name, array in weights().items():
        got = converted[names[gguf_name]]
        assert got.dtype == np.float32 and got.shape == array.shape
        assert np.array_equal(got, array.astype(np.float32))
        assert got.tobytes() == array.astype(np.float32).tobytes()  # to the bit, signs of 0 too
    assert names["blk.1.attn_qkv.weight"] == "encoder.layers.1.attn.Wqkv.weight"
    assert names["token_embd_norm.bias"] == "emb_ln.bias"


def test_fc11_holds_ffn_up_and_fc12_holds_ffn_gate(folder: Path) -> None:
    """nomic-bert's MLP is fc2(silu(fc12 x) * fc11 x), llama.cpp's down(silu(gate x) * up x).
    The other way round the real model's vectors all point one way (every cosine 1.0)."""
    converted = load_file(str(folder / "model.safetensors"))
    source = weights()
    for layer in range(LAYERS):
        mlp, block = f"encoder.layers.{layer}.mlp", f"blk.{layer}"
        up = source[f"{block}.ffn_up.weight"].astype(np.float32)
        gate = source[f"{block}.ffn_gate.weight"].astype(np.float32)
        assert np.array_equal(converted[f"{mlp}.fc11.weight"], up)
        assert np.array_equal(converted[f"{mlp}.fc12.weight"], gate)
        assert not np.array_equal(up, gate)


def test_the_vocabulary_is_in_berts_spelling_and_the_special_tokens_follow_the_ids(
    folder: Path,
) -> None:
    assert (folder / "vocab.txt").read_text(encoding="utf-8") == "".join(f"{t}\n" for t in VOCAB)
    special = config_of(folder, "special_tokens_map.json")
    assert special == {
        "cls_token": "[CLS]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "unk_token": "[UNK]",
        "mask_token": "[MASK]",
    }
    tokenizer = config_of(folder, "tokenizer_config.json")
    assert tokenizer["tokenizer_class"] == "BertTokenizer"
    assert {key: tokenizer[key] for key in special} == special
    assert tokenizer["model_max_length"] == CONTEXT


def test_the_sizes_and_rotary_base_come_from_the_metadata(tmp_path: Path) -> None:
    """A rotary base other than transformers' default (1000) shows it is read, not assumed."""
    folder = convert(tmp_path, metadata(**{"rope.freq_base": np.float32(10000.0)}))
    config = config_of(folder)
    assert {key: config[key] for key in ("n_embd", "n_layer", "n_inner", "n_head")} == {
        "n_embd": HIDDEN,
        "n_layer": LAYERS,
        "n_inner": INNER,
        "n_head": HEADS,
    }
    assert config["rotary_emb_base"] == 10000.0
    assert config["n_positions"] == config["max_trained_positions"] == CONTEXT
    assert config["layer_norm_epsilon"] == float(np.float32(1e-12))
    transformers_names = {
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "intermediate_size": INNER,
        "num_attention_heads": HEADS,
        "max_position_embeddings": CONTEXT,
        "vocab_size": len(TOKENS),
        "type_vocab_size": 2,
        "pad_token_id": PAD,
    }
    assert {key: config[key] for key in transformers_names} == transformers_names
    assert config["layer_norm_eps"] == float(np.float32(1e-12))
    assert config["rope_parameters"] == {"rope_type": "default", "rope_theta": 10000.0}
    assert config["model_type"] == "nomic_bert" and config["architectures"] == ["NomicBertModel"]
    assert config_of(folder, "1_Pooling/config.json")["word_embedding_dimension"] == HIDDEN
    assert config_of(folder, "1_Pooling/config.json")["pooling_mode_mean_tokens"] is True
    assert config_of(folder, "sentence_bert_config.json")["max_seq_length"] == CONTEXT


# GGUF names -> transformers' NomicBertModel's (their attn_qkv split into q, k, v)
IN_TRANSFORMERS = {
    "token_embd.weight": "embeddings.word_embeddings.weight",
    "token_types.weight": "embeddings.token_type_embeddings.weight",
    "token_embd_norm.": "embeddings.LayerNorm.",
    "blk.": "layers.",
    "attn_output.weight": "self_attn.o_proj.weight",
    "attn_output_norm.": "post_attention_layernorm.",
    "ffn_up.": "mlp.up_proj.",
    "ffn_gate.": "mlp.gate_proj.",
    "ffn_down.": "mlp.down_proj.",
    "layer_output_norm.": "post_mlp_layernorm.",
}


def in_transformers(gguf_name: str) -> str:
    for ours, theirs in IN_TRANSFORMERS.items():
        gguf_name = gguf_name.replace(ours, theirs)
    return gguf_name


def test_sentence_transformers_loads_every_weight_and_encodes_unit_vectors(folder: Path) -> None:
    """transformers' own NomicBertModel, no weight left to its random initialisation (fc11 read
    as up_proj, fc12 as gate_proj), BERT's WordPiece over vocab.txt, mean pooling, normalized."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    encoder = model[0].auto_model
    assert isinstance(encoder, torch.nn.Module)
    assert type(encoder).__name__ == "NomicBertModel"
    assert [type(module).__name__ for module in model] == ["Transformer", "Pooling", "Normalize"]
    loaded = encoder.state_dict()
    expected: dict[str, torch.Tensor] = {}
    for gguf_name, array in weights().items():
        as_float32 = torch.from_numpy(array.astype(np.float32))
        if gguf_name.endswith("attn_qkv.weight"):  # split into its thirds
            attention = in_transformers(gguf_name).replace("attn_qkv.weight", "self_attn")
            for part, third in zip("qkv", as_float32.chunk(3), strict=True):
                expected[f"{attention}.{part}_proj.weight"] = third
        else:
            expected[in_transformers(gguf_name)] = as_float32
    assert sorted(loaded) == sorted(expected)
    for name, tensor in expected.items():
        assert torch.equal(loaded[name], tensor), name
    assert model.tokenize(["The cats sat."])["input_ids"].tolist() == [[CLS, 6, 7, 8, 9, 15, SEP]]
    vectors = model.encode(["the cat sat on a mat .", "a dog ran"], convert_to_numpy=True)
    assert vectors.shape == (2, HIDDEN) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) < 0.999  # two sentences, two directions


def test_two_conversions_give_the_same_bytes(tmp_path: Path) -> None:
    first, second = convert(tmp_path, name="a"), convert(tmp_path, name="b")
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert len(files) == 8
    for relative in files:
        assert (first / relative).read_bytes() == (second / relative).read_bytes()


def without(name: str) -> dict[str, np.ndarray]:
    tensors = weights()
    del tensors[name]
    return tensors


@pytest.mark.parametrize(
    ("meta", "tensors", "message"),
    [
        (metadata(**{"general.architecture": "bert"}), None, "not a nomic-bert GGUF"),
        (metadata(pooling_type=np.uint32(2)), None, "its pooling is not mean pooling"),
        (metadata(**{"attention.causal": True}), None, "causal nomic-bert"),
        (metadata(**{"tokenizer.ggml.model": "gpt2"}), None, "not BERT's WordPiece"),
        (None, without("blk.1.ffn_gate.weight"), r"\[\], \['blk\.1\.ffn_gate\.weight'\]"),
        (
            None,
            weights() | {"output.weight": np.zeros((4, HIDDEN), np.float16)},
            r"unexpected tensors \['output\.weight'\]",
        ),
    ],
    ids=["architecture", "cls-pooling", "causal", "tokenizer", "missing-tensor", "extra-tensor"],
)
def test_what_the_converter_does_not_know_is_refused(
    tmp_path: Path,
    meta: dict[str, Value] | None,
    tensors: dict[str, np.ndarray] | None,
    message: str,
) -> None:
    """Refused before anything is written: the folder stays empty."""
    with pytest.raises(ValueError, match=message):
        convert(tmp_path, meta, tensors)
    assert list((tmp_path / "model").iterdir()) == []
