"""`golden record --from gguf:FILE --base-model DIR`: the golden of the weights a GGUF server
computes with. The GGUFs here are MiniLM's own tensors under llama.cpp's names, written by
gguf-py's writer: matrices in Q8_0 (gguf-py's quantizer, the block format llama.cpp's q8_0 writes),
the rest F32, as llama.cpp's quantizer leaves norms and biases."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import gguf  # the test extra installs it: missing, an error, not a skip
import numpy as np
import pytest

from conformance.checks.agreement import cosine_distances
from conformance.cli import main
from conformance.references import bundled_golden, load_golden
from conformance.references.recording import problems
from tests.support.bare_vllm import model_dir

LAYERS = 6


def write_minilm_gguf(path: Path, quantized: gguf.GGMLQuantizationType, drop: str = "") -> None:
    """MiniLM's tensors as a GGUF: 2-D ones in ``quantized``, 1-D in F32; ``drop`` left out."""
    from safetensors.numpy import load_file

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, LAYERS)
    writer = gguf.GGUFWriter(str(path), "bert")
    for hf_name, values in load_file(str(Path(model_dir()) / "model.safetensors")).items():
        gguf_name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if gguf_name is None or gguf_name == drop:  # position_ids, the pooler: not in a GGUF
            continue
        values = values.astype(np.float32)
        if values.ndim == 2:
            data = gguf.quants.quantize(values, quantized)
            writer.add_tensor(gguf_name, data, raw_shape=data.shape, raw_dtype=quantized)
        else:
            writer.add_tensor(gguf_name, values)
    finish(writer)


def finish(writer: gguf.GGUFWriter) -> None:
    """Header, metadata and tensors to the file, in the order GGUF lays them out."""
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.fixture(scope="module")
def q8_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gguf") / "minilm-q8_0.gguf"
    write_minilm_gguf(path, gguf.GGMLQuantizationType.Q8_0)
    return path


def record(*args: str) -> int:
    return main(["golden", "record", "--quiet", *args])


def test_the_golden_of_q8_0_weights_is_theirs_and_names_them(
    q8_gguf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "q8_0"
    assert record("--from", f"gguf:{q8_gguf}", "--base-model", model_dir(), "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "weights: minilm-q8_0.gguf (" in printed and "Q8_0" in printed, printed
    assert "the fp32 golden of its model: all-MiniLM-L6-v2/sentence-transformers" in printed
    assert problems(out) == []
    assert [p.name for p in tmp_path.iterdir()] == ["q8_0"]  # the dequantized folder is gone
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["gguf"]["sha256"] == hashlib.sha256(q8_gguf.read_bytes()).hexdigest()
    types = manifest["gguf"]["tensor_types"]
    # 6 matrices a layer, 3 embeddings; norms and biases F32
    assert set(types) == {"Q8_0", "F32"} and types["Q8_0"] == 6 * LAYERS + 3, types
    assert manifest["derived_from"]["golden"] == "all-MiniLM-L6-v2/sentence-transformers"
    # the weights' own rounding, and only it: near the fp32 golden (q8_0 moves MiniLM's vectors
    # by about 1e-4 in cosine), never on it, and a systematic move on every input
    fp32 = bundled_golden("all-MiniLM-L6-v2")
    assert fp32 is not None
    distances = cosine_distances(load_golden(out).vectors, load_golden(fp32).vectors)
    assert np.median(distances) > 0 and distances.max() < 5e-3, distances
    assert (distances > 0).mean() > 0.9


def test_a_gguf_of_another_shape_writes_nothing_and_says_which_tensor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    partial = tmp_path / "partial.gguf"
    write_minilm_gguf(partial, gguf.GGMLQuantizationType.Q8_0, drop="blk.3.ffn_up.weight")
    out = tmp_path / "golden"
    assert record("--from", f"gguf:{partial}", "--base-model", model_dir(), "--out", str(out)) == 1
    error = capsys.readouterr().err
    assert "does not fit" in error and "blk.3.ffn_up.weight" in error, error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["partial.gguf"]  # nothing else left


def test_a_gguf_of_another_architecture_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    decoder = tmp_path / "decoder.gguf"
    writer = gguf.GGUFWriter(str(decoder), "llama")
    writer.add_tensor("blk.0.attn_q.weight", np.zeros((32, 32), dtype=np.float32))
    finish(writer)
    out = tmp_path / "golden"
    assert record("--from", f"gguf:{decoder}", "--base-model", model_dir(), "--out", str(out)) == 1
    assert "architecture 'llama': only bert, nomic-bert are dequantized" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["decoder.gguf"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--from", "gguf:{model}/model.safetensors", "--base-model", "{model}"], "not a GGUF"),
        (["--from", "gguf:{tmp}/none.gguf", "--base-model", "{model}"], "no such file"),
        (["--from", "gguf:{tmp}/none.gguf"], "--base-model goes with --from gguf:FILE"),
        (["--from", "sentence-transformers:{model}", "--base-model", "{model}"], "goes with"),
    ],
)
def test_usage_errors_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    filled = [a.format(model=model_dir(), tmp=tmp_path) for a in arguments]
    assert record(*filled, "--out", str(tmp_path / "golden")) == 1
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
