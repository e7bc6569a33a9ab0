"""Which folders under the bundled goldens are models."""

from __future__ import annotations

from pathlib import Path

import pytest

import conformance.references as references


def test_only_folders_holding_a_golden_are_bundled_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python writes __pycache__ beside the data package's __init__.py (any non-editable install
    # compiles it); taken for a model, it stopped every run with "no manifest.json".
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "some-model" / references.DEFAULT_SOURCE).mkdir(parents=True)
    (tmp_path / "some-model" / references.DEFAULT_SOURCE / "manifest.json").write_text("{}")
    (tmp_path / "__init__.py").write_text("")
    monkeypatch.setattr(references, "golden_root", lambda: tmp_path)
    assert references.bundled_models() == ["some-model"]


def test_the_installed_goldens_are_all_found() -> None:
    assert {"all-MiniLM-L6-v2", "minilm-cls-dense-256"} <= set(references.bundled_models())
    assert "__pycache__" not in references.bundled_models()
