"""The server's own reading of a model folder: the pooling, the head and the normalization each
bundled model is built with, and the config spellings sentence-transformers accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance import variants
from conformance.server.model_folder import ModelFolderError, ModelLayout, read_layout


@pytest.mark.parametrize("name", sorted(variants.VARIANTS))
def test_each_variant_reads_as_it_was_built(tmp_path: Path, name: str) -> None:
    variant = variants.VARIANTS[name]
    layout = read_layout(variants.build(name, tmp_path))
    assert layout.pooling == variant.pooling
    assert layout.normalized is variant.normalized
    assert [layout.kinds[i] for i in layout.head] == (["Dense"] if variant.dense else [])


def test_the_bundled_model_is_mean_pooled_and_normalized() -> None:
    layout = read_layout(variants.encoder_dir())  # legacy pooling flags, no "pooling_mode"
    assert layout == ModelLayout(("Transformer", "Pooling", "Normalize"), "mean")
    assert layout.normalized and list(layout.head) == []


def folder(tmp_path: Path, kinds: list[str], pooling: dict[str, Any]) -> Path:
    modules = [
        {"idx": i, "name": str(i), "path": f"{i}_{kind}" if i else "", "type": f"x.{kind}"}
        for i, kind in enumerate(kinds)
    ]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return tmp_path


@pytest.mark.parametrize(
    ("config", "mode"),
    [
        ({"pooling_mode": "lasttoken", "pooling_mode_mean_tokens": True}, "lasttoken"),
        ({"pooling_mode": ["cls", "max"]}, "cls+max"),
        ({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}, "cls"),
        ({"pooling_mode_mean_tokens": True, "include_prompt": True}, "mean"),
        ({"pooling_mode_max_tokens": True, "pooling_mode_cls_token": True}, "cls+max"),
        ({"word_embedding_dimension": 384}, "mean"),
    ],
)
def test_pooling_configs_read_as_sentence_transformers_reads_them(
    tmp_path: Path, config: dict[str, Any], mode: str
) -> None:
    assert read_layout(folder(tmp_path, ["Transformer", "Pooling"], config)).pooling == mode


def test_only_a_final_normalize_makes_the_output_unit_length(tmp_path: Path) -> None:
    kinds = ["Transformer", "Pooling", "Normalize", "Dense"]
    layout = read_layout(folder(tmp_path, kinds, {"pooling_mode": "cls"}))
    assert not layout.normalized
    assert list(layout.head) == [2, 3]  # the Normalize in the middle runs as it is


def test_a_plain_transformers_folder_is_a_mean_pooled_encoder(tmp_path: Path) -> None:
    assert read_layout(tmp_path) == ModelLayout(("Transformer", "Pooling"), "mean")


def test_an_unreadable_module_list_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "modules.json").write_text('{"not": "a list"}')
    with pytest.raises(ModelFolderError, match=r"modules\.json: not a list"):
        read_layout(tmp_path)
    (tmp_path / "modules.json").write_text('[{"idx": 0}]')
    with pytest.raises(ModelFolderError, match="without a type"):
        read_layout(tmp_path)
