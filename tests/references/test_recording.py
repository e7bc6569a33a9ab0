"""Golden directories: save/load, what problems() sees, and choosing a reference."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance.references import (
    GoldenError,
    bundled_golden,
    golden_root,
    load_golden,
    parse_reference,
    recording,
)
from conformance.references.recording import (
    FORMAT,
    MANIFEST,
    TOKENS,
    VECTORS,
    Recording,
    load,
    problems,
    save,
    sha256_bytes,
)

MODEL = "all-MiniLM-L6-v2"
BUNDLED = golden_root() / MODEL
IDS = ["a", "b", "c"]
VECTORS_3x4 = np.arange(12, dtype=np.float32).reshape(3, 4) / 10


def make_recording(
    case_ids: list[str] = IDS,
    vectors: np.ndarray = VECTORS_3x4,
    tokens: dict[str, list[int]] | None = None,
    **manifest: Any,
) -> Recording:
    return Recording(
        {
            "model": MODEL,
            "normalized": False,
            "case_ids": case_ids,
            "rejected": {"d": "HTTP 400"},
            "corpus": {"name": "reference", "sha256": "0" * 64},
            **manifest,
        },
        vectors,
        tokens,
    )


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    """A freshly saved (valid) recording directory."""
    directory = tmp_path / "golden"
    save(make_recording(), directory)
    return directory


def read_manifest(directory: Path) -> dict[str, Any]:
    return json.loads((directory / MANIFEST).read_text(encoding="utf-8"))


def write_manifest(directory: Path, **changes: Any) -> None:
    text = json.dumps({**read_manifest(directory), **changes})
    (directory / MANIFEST).write_text(text, encoding="utf-8")


def problem_text(directory: Path) -> str:
    found = problems(directory)
    assert found, "expected problems"
    assert all(p.startswith(f"{directory}: ") for p in found)
    return "; ".join(found)


# save / load


def test_save_then_load_keeps_the_manifest_and_the_vectors(golden: Path) -> None:
    loaded = load(golden)
    sha256 = sha256_bytes((golden / VECTORS).read_bytes())
    assert loaded.manifest == {
        **make_recording().manifest,
        "format": FORMAT,
        "files": {VECTORS: {"sha256": sha256, "shape": [3, 4], "dtype": "<f4"}},
    }
    np.testing.assert_array_equal(loaded.vectors, VECTORS_3x4)
    assert loaded.dimension == 4
    assert loaded.rejected == {"d": "HTTP 400"}


def test_loaded_recording_answers_by_case_id(golden: Path) -> None:
    loaded = load(golden)
    np.testing.assert_array_equal(loaded.vector("b"), VECTORS_3x4[1])
    assert loaded.vector("d") is None  # rejected by the source
    np.testing.assert_array_equal(loaded.matrix(["c", "a"]), VECTORS_3x4[[2, 0]])
    assert loaded.matrix(["c", "a"]).dtype == np.float64


def test_token_ids_are_saved_one_line_per_case_and_verified(tmp_path: Path) -> None:
    tokens = {"a": [101, 7592, 102], "b": [101, 102], "c": [101, 2088, 999, 102]}
    save(make_recording(special_tokens=2, tokens=tokens), tmp_path)
    assert (tmp_path / TOKENS).read_text(encoding="utf-8").splitlines()[1] == (
        '"a": [101, 7592, 102],'
    )
    loaded = load(tmp_path)
    assert loaded.token_ids("c") == [101, 2088, 999, 102]
    assert loaded.token_ids("d") is None
    assert loaded.special_tokens == 2
    (tmp_path / TOKENS).write_text('{"a": [1]}', encoding="utf-8")
    assert "tokens.json: sha256 differs from the manifest" in problem_text(tmp_path)


def test_a_recording_without_token_ids_says_so(golden: Path) -> None:
    loaded = load(golden)
    assert loaded.tokens is None and loaded.token_ids("a") is None
    assert loaded.special_tokens is None


def test_save_refuses_a_non_empty_directory(golden: Path) -> None:
    with pytest.raises(GoldenError, match="exists and is not empty"):
        save(make_recording(vectors=VECTORS_3x4 * 2), golden)
    np.testing.assert_array_equal(load(golden).vectors, VECTORS_3x4)


def test_save_with_overwrite_replaces_a_directory(golden: Path) -> None:
    save(make_recording(vectors=VECTORS_3x4 * 2), golden, overwrite=True)
    np.testing.assert_array_equal(load(golden).vectors, VECTORS_3x4 * 2)


def test_save_fills_an_existing_empty_directory(tmp_path: Path) -> None:
    save(make_recording(), tmp_path)
    assert problems(tmp_path) == []


def fail_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(recording.os, "replace", refuse)


def test_a_failed_save_leaves_neither_target_nor_staging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_rename(monkeypatch)
    with pytest.raises(OSError, match="disk full"):
        save(make_recording(), tmp_path / "out" / "golden")
    assert list((tmp_path / "out").iterdir()) == []


def test_a_failed_overwrite_keeps_the_old_golden(
    golden: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BUG (conformance/references/recording.py save): with overwrite=True the old golden is
    # rmtree'd before os.replace, so a failed rename loses it ("atomically" / all-or-nothing).
    fail_rename(monkeypatch)
    with pytest.raises(OSError, match="disk full"):
        save(make_recording(vectors=VECTORS_3x4 * 2), golden, overwrite=True)
    assert [p.name for p in golden.parent.iterdir()] == ["golden"]
    np.testing.assert_array_equal(load(golden).vectors, VECTORS_3x4)


# problems / load


def test_a_saved_recording_has_no_problems(golden: Path) -> None:
    assert problems(golden) == []


def test_problems_reports_a_missing_manifest(tmp_path: Path) -> None:
    assert problems(tmp_path) == [f"{tmp_path}: no {MANIFEST}"]


def test_problems_reports_a_changed_vectors_file(golden: Path) -> None:
    np.save(golden / VECTORS, VECTORS_3x4 + 1)
    assert "vectors.npy: sha256 differs from the manifest" in problem_text(golden)


def test_problems_reports_a_missing_vectors_file(golden: Path) -> None:
    (golden / VECTORS).unlink()
    assert "vectors.npy: missing" in problem_text(golden)


def test_problems_reports_fewer_case_ids_than_rows(tmp_path: Path) -> None:
    save(make_recording(case_ids=["a", "b"]), tmp_path)
    assert "2 case ids for 3 rows" in problem_text(tmp_path)


def test_problems_reports_duplicate_case_ids(golden: Path) -> None:
    write_manifest(golden, case_ids=["a", "b", "a"])
    assert "duplicate case ids" in problem_text(golden)


def test_problems_reports_a_manifest_that_is_not_an_object(golden: Path) -> None:
    # BUG (conformance/references/recording.py problems): a JSON manifest that is not an
    # object raises AttributeError ('list' has no 'get') instead of being reported.
    (golden / MANIFEST).write_text("[]", encoding="utf-8")
    assert problems(golden)


def test_load_refuses_a_tampered_directory(golden: Path) -> None:
    np.save(golden / VECTORS, VECTORS_3x4 + 1)
    with pytest.raises(GoldenError, match="sha256 differs"):
        load(golden)


def test_load_golden_refuses_a_recording_of_another_corpus(golden: Path) -> None:
    with pytest.raises(GoldenError, match="another version of the reference corpus"):
        load_golden(golden)


@pytest.mark.parametrize("source", ["sentence-transformers", "vllm"])
def test_bundled_goldens_are_intact_and_match_the_corpus(source: str) -> None:
    assert problems(BUNDLED / source) == []
    golden = load_golden(BUNDLED / source)
    assert golden.model == MODEL
    # the truth for usage.counts-tokens and token-id input: every case's ids, [CLS] ... [SEP]
    assert golden.special_tokens == 2
    assert all(golden.token_ids(case_id) for case_id in golden.rows)
    assert golden.token_ids("en-sent-01") == [
        101, 2071, 2017, 3413, 1996, 5474, 1010, 3531, 1029, 102
    ]  # fmt: skip


# parse_reference / bundled_golden


@pytest.mark.parametrize("served", [MODEL, f"sentence-transformers/{MODEL}"])
def test_without_reference_the_served_model_picks_its_bundled_golden(served: str) -> None:
    spec = parse_reference(None, served)
    assert spec is not None
    assert spec.kind == "golden"
    assert Path(spec.location) == BUNDLED / "sentence-transformers"
    assert "default" in spec.label


def test_without_reference_an_unknown_model_has_none() -> None:
    assert parse_reference(None, "some/other-model") is None


def test_reference_none_means_no_reference() -> None:
    assert parse_reference("none", MODEL) is None


def test_reference_golden_names_a_bundled_source() -> None:
    spec = parse_reference(f"golden:{MODEL}/vllm", "whatever")
    assert spec is not None
    assert (spec.kind, Path(spec.location)) == ("golden", BUNDLED / "vllm")


def test_reference_golden_names_a_directory(tmp_path: Path) -> None:
    bundled = bundled_golden(MODEL)
    assert bundled is not None
    copy = tmp_path / "copy"
    shutil.copytree(bundled, copy)
    spec = parse_reference(f"golden:{copy}", MODEL)
    assert spec is not None
    assert (spec.kind, spec.location) == ("golden", str(copy))


def test_reference_golden_checks_the_directory_at_once(tmp_path: Path) -> None:
    with pytest.raises(GoldenError, match=r"no manifest\.json"):
        parse_reference(f"golden:{tmp_path}", MODEL)


def test_reference_endpoint_is_a_url() -> None:
    spec = parse_reference("http://x:1", MODEL)
    assert spec is not None
    assert (spec.kind, spec.location) == ("endpoint", "http://x:1")


@pytest.mark.parametrize(
    "text", ["sentence-transformers:/no/such", "golden:no-such-model", "bogus"]
)
def test_reference_refuses_what_it_cannot_use(text: str) -> None:
    with pytest.raises(ValueError):
        parse_reference(text, MODEL)


@pytest.mark.parametrize(
    ("name", "source"),
    [("ALL-minilm-L6-V2", "sentence-transformers"), ("all-minilm-l6-v2/vllm", "vllm")],
)
def test_bundled_golden_matches_the_model_without_case(name: str, source: str) -> None:
    assert bundled_golden(name) == BUNDLED / source
