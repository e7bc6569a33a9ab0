"""The model variants derived from all-MiniLM-L6-v2: the same bytes on every build and machine,
loadable as ordinary sentence-transformers folders, and named exactly by their goldens."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conformance import variants
from conformance.cli import main
from conformance.references import bundled_golden, reference_cases

# The digests every machine must build (sha256 over each file's path and sha256). A change to
# a variant, or to the bundled encoder's files, changes these and calls for new goldens.
EXPECTED_DIGESTS = {
    "minilm-cls-dense-256": "52a533d9111f96dcd06829234b292e2196235d9b1d9d6f5de7f7a479358d5525",
    "minilm-matryoshka": "2eaa48b6545c00bdfcc5bd5f5687183cdb26edb7c5369ce3c30813402f0177d5",
    "minilm-last-token": "0d008798f811919fdc1fad52c08c4398e1d2198e685fc9c27ad66a40ec940153",
}


def test_two_builds_give_the_same_bytes_and_the_expected_digests(tmp_path: Path) -> None:
    first = variants.build_all(variants.VARIANTS, tmp_path / "a")
    second = variants.build_all(variants.VARIANTS, tmp_path / "b")
    for name, folder in first.items():
        files = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
        again = second[name]
        assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
        for relative in files:
            assert (folder / relative).read_bytes() == (second[name] / relative).read_bytes()
        assert variants.tree_digest(folder) == EXPECTED_DIGESTS[name]
        assert folder.stat().st_mode & 0o055  # readable by others, not mkdtemp's 0700


def test_a_damaged_build_is_rebuilt(tmp_path: Path) -> None:
    folder = variants.build("minilm-last-token", tmp_path)
    (folder / "vocab.txt").write_text("damaged")
    assert (
        variants.tree_digest(variants.build("minilm-last-token", tmp_path))
        == (EXPECTED_DIGESTS["minilm-last-token"])
    )


def test_the_dense_weights_are_valid_safetensors(tmp_path: Path) -> None:
    from safetensors.numpy import load_file

    folder = variants.build("minilm-cls-dense-256", tmp_path)
    tensors = load_file(str(folder / "2_Dense" / "model.safetensors"))
    assert tensors["linear.weight"].shape == (256, 384)
    assert tensors["linear.bias"].shape == (256,)
    assert 0.09 < float(np.abs(tensors["linear.weight"]).max()) < variants.DENSE_SCALE
    modules = json.loads((folder / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[1] for m in modules] == ["Transformer", "Pooling", "Dense"]


@pytest.mark.parametrize("name", sorted(variants.VARIANTS))
def test_each_bundled_golden_names_the_folder_it_was_recorded_from(name: str) -> None:
    golden = bundled_golden(name)
    assert golden is not None
    manifest = json.loads((golden / "manifest.json").read_text())
    assert manifest["model_sha256"] == EXPECTED_DIGESTS[name]
    variant = variants.VARIANTS[name]
    assert manifest["pooling"] == variant.pooling
    assert manifest["normalized"] is variant.normalized
    assert manifest["files"]["vectors.npy"]["shape"] == [len(reference_cases()), variant.dimension]


def test_the_cli_builds_and_names_the_digests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "build", "--out", str(tmp_path), "minilm-matryoshka"]) == 0
    digest, folder = capsys.readouterr().out.split()
    assert digest == EXPECTED_DIGESTS["minilm-matryoshka"]
    config = json.loads((Path(folder) / "config.json").read_text())
    assert config["matryoshka_dimensions"] == [384, 256, 128, 64, 32]
    assert main(["models", "build", "--out", str(tmp_path), "no-such-model"]) == 4
    assert "unknown model no-such-model" in capsys.readouterr().err


def test_a_fault_the_model_cannot_show_is_refused() -> None:
    from conformance.server.engines.sentence_transformers import SentenceTransformersEngine

    with pytest.raises(ValueError, match="needs a model with a Dense layer"):
        SentenceTransformersEngine(None, "dense-skipped")
