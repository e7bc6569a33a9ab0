"""The bundled goldens: intact, current, and in agreement with each other.

sentence-transformers and bare vLLM are two independent implementations of the same model; if
a vLLM upgrade drifts from sentence-transformers, re-recording the vLLM golden makes this fail.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conformance.checks.agreement import cosine_distances
from conformance.cli import main
from conformance.models.fetch import FetchedModel
from conformance.models.pinned import MPNET, NOMIC
from conformance.references import Recording, bundled_golden, load_golden, reference_cases
from conformance.references.recording import problems
from conformance.tolerances import TIERS
from tests.conftest import API_KEY
from tests.support.bare_vllm import model_dir

FP32 = TIERS["fp32"]


def golden(name: str) -> Recording:
    path = bundled_golden(name)
    assert path is not None, name
    return load_golden(path)


@pytest.mark.parametrize(
    "model",
    [
        "all-MiniLM-L6-v2",
        "minilm-cls-dense-256",
        "minilm-matryoshka",
        "minilm-last-token",
        "nomic-embed-text-v1.5",  # bare vLLM 0.32 refuses all-mpnet-base-v2's MPNet
    ],
)
def test_sentence_transformers_and_bare_vllm_goldens_agree_within_fp32(model: str) -> None:
    st, vllm = golden(model), golden(f"{model}/vllm")
    common = [i for i in st.manifest["case_ids"] if i in vllm.rows]
    assert len(common) == len(vllm.manifest["case_ids"]) >= 230
    a, b = st.matrix(common), vllm.matrix(common)
    assert np.abs(a - b).max() <= FP32.reference_atol
    assert cosine_distances(a, b).max() <= FP32.cosine_atol


def test_bare_vllm_rejects_exactly_the_inputs_past_the_context() -> None:
    over = {c.id for c in reference_cases() if "over-context" in c.tags}
    assert set(golden("all-MiniLM-L6-v2/vllm").rejected) == over
    assert golden("all-MiniLM-L6-v2").rejected == {}  # sentence-transformers truncates


def test_manifests_say_how_the_vectors_were_made() -> None:
    for name in ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2/vllm"):
        m = golden(name).manifest
        assert m["model"] == "all-MiniLM-L6-v2"
        assert m["weights_sha256"] and m["dtype"] == "float32" and m["pooling"] == "mean"
        assert m["normalized"] is True and m["max_tokens"] == 256
        assert m["created"] and m["command"].startswith("embedding-conformance golden record")


@pytest.mark.parametrize("model", [MPNET, NOMIC], ids=lambda m: m.name)
def test_the_real_models_goldens_name_the_pinned_weights(model: FetchedModel) -> None:
    """Recorded from the folders `models fetch` builds: the weights' hash is the pinned one,
    the context and tokenizer the model's own (MPNet's <s>=0 ... </s>=2, nomic's [CLS] ... [SEP]
    as MiniLM's), every corpus case embedded: sentence-transformers truncates, bare vLLM refuses
    what is past nomic's 2,048 tokens (ctx-past-2100 alone) and says so."""
    pinned = model.files["model.safetensors"]
    context = {MPNET.name: 384, NOMIC.name: 2048}[model.name]
    for source in (
        ("sentence-transformers", "vllm") if model is NOMIC else ("sentence-transformers",)
    ):
        recording = golden(f"{model.name}/{source}")
        m = recording.manifest
        assert (m["model"], m["weights_sha256"], m["max_tokens"]) == (model.name, pinned, context)
        assert recording.dimension == 768 and recording.normalized and m["pooling"] == "mean"
        past = ["ctx-past-2100"] if source == "vllm" else []
        assert list(recording.rejected) == past
        assert m["over_context"] == ("reject" if past else "truncate")
        assert len(m["case_ids"]) + len(past) == len(reference_cases())
        ids = recording.token_ids("en-sent-01")
        assert ids is not None
        assert (ids[0], ids[-1]) == ((0, 2) if model is MPNET else (101, 102))


def test_golden_verify_passes_the_bundled_goldens(capsys: pytest.CaptureFixture[str]) -> None:
    root = bundled_golden("all-MiniLM-L6-v2")
    assert root is not None
    # every bundled model: all-MiniLM-L6-v2 and the variants (each source), all-mpnet-base-v2,
    # nomic-embed-text-v1.5 (each source)
    assert main(["golden", "verify", str(root.parent.parent)]) == 0
    assert "11 golden directories checked, 0 problems" in capsys.readouterr().out


def test_golden_verify_names_a_damaged_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    source = bundled_golden("all-MiniLM-L6-v2")
    assert source is not None
    copy = tmp_path / "damaged"
    shutil.copytree(source, copy)
    data = bytearray((copy / "vectors.npy").read_bytes())
    data[-1] ^= 0xFF
    (copy / "vectors.npy").write_bytes(bytes(data))
    assert main(["golden", "verify", str(copy)]) == 1
    assert "vectors.npy: sha256 differs from the manifest" in capsys.readouterr().err


def test_recording_sentence_transformers_here_reproduces_the_golden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "st"
    source = f"sentence-transformers:{model_dir()}"
    assert main(["golden", "record", "--from", source, "--out", str(out)]) == 0
    streams = capsys.readouterr()
    cases = len(reference_cases())
    assert f"recorded {cases} of {cases} cases" in streams.out
    assert f"{cases}/{cases}" in streams.err  # the progress bar
    assert problems(out) == []
    fresh, bundled = load_golden(out), golden("all-MiniLM-L6-v2")
    assert np.abs(fresh.vectors - bundled.vectors).max() <= FP32.reference_atol


def test_record_refuses_to_overwrite_and_leaves_the_directory_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    source = f"sentence-transformers:{model_dir()}"
    assert main(["golden", "record", "--from", source, "--out", str(out), "--quiet"]) == 1
    assert "exists and is not empty (use --force" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_record_from_an_endpoint_that_is_not_there_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "nothing"
    args = ["golden", "record", "--from-endpoint", "http://127.0.0.1:9", "--out", str(out)]
    assert main(args) == 1
    assert capsys.readouterr().err.startswith("error: ")
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no staging directory left either


def test_record_from_a_protected_endpoint_takes_the_key_the_suite_takes(
    auth_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = ["golden", "record", "--from-endpoint", auth_server, "--quiet", "--out"]
    monkeypatch.delenv("EMBEDDINGS_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main([*record, str(tmp_path / "refused")]) == 1
    assert "401" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)  # what the openai client reads too
    assert main([*record, str(tmp_path / "recorded")]) == 0
    assert problems(tmp_path / "recorded") == []
