"""--baseline: a results.json, a golden recorded from the old server, or both."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conformance.references import golden_root
from conformance.references.baseline import RESULTS, load_baseline

OLD_SERVER = golden_root() / "all-MiniLM-L6-v2" / "vllm"  # recorded from an endpoint
RESULTS_DOCUMENT = {
    "endpoint": "http://old:8000",
    "requirements": [{"id": "batch.order", "status": "PASS"}, {"id": "usage", "status": "FAIL"}],
}


def write_json(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    """A copy of a golden recorded from an endpoint (it holds the old server's behaviour)."""
    return Path(shutil.copytree(OLD_SERVER, tmp_path / "baseline"))


def test_a_results_json_alone_gives_statuses_without_a_recording(tmp_path: Path) -> None:
    baseline = load_baseline(str(write_json(tmp_path / "old.json", RESULTS_DOCUMENT)))
    assert baseline.recording is None
    assert baseline.behaviour is None
    assert baseline.statuses == {"batch.order": "PASS", "usage": "FAIL"}
    assert str(baseline) == "results of http://old:8000"


def test_a_golden_with_its_results_gives_both(golden: Path) -> None:
    write_json(golden / RESULTS, RESULTS_DOCUMENT)
    baseline = load_baseline(str(golden))
    assert baseline.recording is not None
    assert baseline.statuses == {"batch.order": "PASS", "usage": "FAIL"}
    assert baseline.behaviour is not None
    assert set(baseline.behaviour) == {"shape", "errors"}
    assert str(baseline).startswith(f"golden {golden} (endpoint ")
    assert str(baseline).endswith(" + results of http://old:8000")


def test_a_golden_alone_has_no_statuses(golden: Path) -> None:
    baseline = load_baseline(str(golden))
    assert baseline.recording is not None
    assert baseline.results is None
    assert baseline.statuses == {}


def test_a_missing_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file or directory"):
        load_baseline(str(tmp_path / "missing"))


@pytest.mark.parametrize("document", [{"requirements": {}}, [], {"endpoint": "x"}])
def test_a_json_file_that_is_not_a_results_json_is_refused(tmp_path: Path, document: Any) -> None:
    with pytest.raises(ValueError, match=r"not a results\.json written by --results-json"):
        load_baseline(str(write_json(tmp_path / "other.json", document)))


def test_a_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"not a readable results\.json"):
        load_baseline(str(tmp_path / "results.json"))
