"""A published column says what judged it, and ``matrix check`` calls it stale when the
installed suite's catalogue, corpus, goldens, judging code or version differ: a column freshly
recorded passes, and one requirement added, one corpus case added, one golden re-recorded or one
check or tier changed fails it, named. Columns are published through the build's own path
(keep_reports, _publish) from a results document of the bundled reference server; no peer is
started."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

import conformance.references
import conformance.reporting.document
from conformance import __version__
from conformance.cli import main
from conformance.matrix import build, judged, scrub, verify
from conformance.references import golden_root
from conformance.reporting import integrity
from conformance.reporting.document import catalogue_sha256
from conformance.requirements import CATALOGUE

PUBLISHED = Path(__file__).resolve().parents[2] / "docs" / "compatibility"
SOURCE = PUBLISHED / "reference-base64" / "results.json"  # passes every requirement: no triage


def results_of_this_suite(folder: Path) -> Path:
    """A results document as the installed suite writes it: its version and catalogue."""
    document = json.loads(SOURCE.read_text())
    document["suite"] = {**document["suite"], "version": __version__}
    document["suite"]["catalogue_sha256"] = catalogue_sha256()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "results.json"
    path.write_text(json.dumps(integrity.seal(document), indent=2))
    return path


def publish(out: Path, tmp: Path, *names: str) -> None:
    """Judge and publish columns ``names`` into ``out``, as ``matrix build NAME...`` does."""
    staging, outcomes = tmp / "staging", []
    scrubber = scrub.scrubber(tmp / "model", tmp / "cache")
    for name in names:
        outcome = build.Outcome(name, name.title(), "https://example.org", "", "p", "1.0")
        results = results_of_this_suite(tmp / "runs" / name)
        build.keep_reports(results, staging / name, outcome, scrubber)
        outcomes.append(outcome)
    build._publish(outcomes, staging, out, 1.0)
    shutil.rmtree(tmp / "runs")


@pytest.fixture
def published(tmp_path: Path) -> Path:
    out = tmp_path / "published"
    publish(out, tmp_path, "alpha", "beta")
    return out


def entries(out: Path) -> dict[str, dict[str, object]]:
    return {entry["name"]: entry for entry in build.load_manifest(out)["peers"]}


def check(out: Path) -> int:
    return main(["matrix", "check", "--out", str(out)])


def test_a_freshly_recorded_column_is_current(published: Path) -> None:
    recorded = entries(published)["alpha"]["judged_with"]
    assert recorded == {
        "suite_version": __version__,
        "catalogue_sha256": catalogue_sha256(),
        "corpus_sha256": judged.corpus_sha256(),
        "golden_sha256": judged.golden_sha256(["all-MiniLM-L6-v2"]),
        "checks_sha256": judged.checks_sha256(),
    }
    assert verify.problems(published) == []
    assert check(published) == 0


def test_a_requirement_added_makes_every_column_stale(
    published: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    was = catalogue_sha256()[:12]
    added = replace(CATALOGUE[0], id="envelope.new-requirement")
    monkeypatch.setattr(conformance.reporting.document, "CATALOGUE", (*CATALOGUE, added))
    now = catalogue_sha256()[:12]
    assert now != was
    # (the pages differ too: they mark the columns STALE against the installed catalogue)
    assert verify.problems(published, pages=False) == [
        f"{name}: stale, judged with another catalogue {was} → {now} than the installed "
        f"suite; rebuild it (matrix build {name})"
        for name in ("alpha", "beta")
    ]
    assert check(published) == 1
    assert "alpha: stale, judged with another catalogue" in capsys.readouterr().out


def copy_of(folder: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy" / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_corpus_case_added_makes_it_stale(
    published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = copy_of(judged.fixtures_root(), tmp_path)
    core = json.loads((fixtures / "core.json").read_text())
    core["cases"].append({"id": "new-case", "text": "a new case", "tags": []})
    (fixtures / "core.json").write_text(json.dumps(core))
    monkeypatch.setattr(judged, "fixtures_root", lambda: fixtures)
    found = verify.problems(published)
    assert len(found) == 2 and all("another corpus " in problem for problem in found), found
    assert "catalogue" not in found[0] and "golden" not in found[0]


def test_a_reformatted_corpus_file_is_the_same_corpus(
    published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = copy_of(judged.fixtures_root(), tmp_path)
    core = fixtures / "core.json"
    core.write_text(json.dumps(json.loads(core.read_text()), indent=7))
    monkeypatch.setattr(judged, "fixtures_root", lambda: fixtures)
    assert verify.problems(published) == []


def regolden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    """The bundled goldens, with ``model``'s vllm recording's vectors changed in one byte."""
    root = copy_of(golden_root(), tmp_path)
    vectors = root / model / "vllm" / "vectors.npy"
    data = bytearray(vectors.read_bytes())
    data[-1] ^= 1
    vectors.write_bytes(bytes(data))
    monkeypatch.setattr(conformance.references, "golden_root", lambda: root)
    monkeypatch.setattr(judged, "golden_root", lambda: root)


def test_a_golden_rerecorded_makes_the_columns_of_its_model_stale(
    published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regolden(tmp_path, monkeypatch, "all-MiniLM-L6-v2")
    found = verify.problems(published)
    assert [problem.split(":")[0] for problem in found] == ["alpha", "beta"]
    assert all("another golden " in problem for problem in found), found


def test_another_models_golden_leaves_the_columns_current(
    published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regolden(tmp_path, monkeypatch, "minilm-matryoshka")
    assert verify.problems(published) == []


def recoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, old: str, new: str
) -> None:
    """The installed package as a copy, the first ``old`` in ``module`` replaced by ``new``."""
    root = copy_of(judged.package_root(), tmp_path)
    path = root / module
    source = path.read_text()
    assert old in source, old
    path.write_text(source.replace(old, new, 1))
    monkeypatch.setattr(judged, "package_root", lambda: root)


def test_a_changed_tier_makes_every_column_stale(
    published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mini = '"q4_k_m": _tier(2e-2, 1e-3, 0.1, 0.1, 2e-2, 0.1)'  # MiniLM's own q4_k_m limits
    recoded(tmp_path, monkeypatch, "tolerances.py", mini, mini.replace("0.1, 0.1", "0.1, 1.0"))
    found = verify.problems(published)
    assert [problem.split(":")[0] for problem in found] == ["alpha", "beta"]
    assert all("another checks " in problem for problem in found), found


def test_a_changed_check_makes_every_column_stale(
    published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recoded(tmp_path, monkeypatch, "checks/normalization.py", "atol)\n", "atol * 10)\n")
    assert len(verify.problems(published)) == 2


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("checks/normalization.py", "from __future__", "# reworded\nfrom __future__"),
        ("tolerances.py", '"""', '"""Reworded. '),  # the module's docstring
        ("suite/test_baseline.py", "def ", "def _unused() -> None:\n    pass\n\n\ndef "),
    ],
)
def test_a_comment_a_docstring_or_the_gate_leaves_the_columns_current(
    published: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    module: str,
    old: str,
    new: str,
) -> None:
    """Rewording changes no verdict; the gate's modules judge no column (no --baseline)."""
    recoded(tmp_path, monkeypatch, module, old, new)
    assert verify.problems(published) == []


def test_another_suite_version_is_stale(published: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judged, "__version__", "99.0")
    found = verify.problems(published)
    assert len(found) == 2 and all("another version " in problem for problem in found), found


def test_a_column_without_a_record_is_stale(published: Path) -> None:
    manifest = build.load_manifest(published)
    del manifest["peers"][1]["judged_with"]  # as every column published before the records
    (published / "matrix.json").write_text(json.dumps(manifest))
    assert verify.stale(published) == [
        "beta: stale, no record of what it was judged with; rebuild it (matrix build beta)"
    ]


def test_a_partial_rebuild_keeps_the_other_columns_records(
    published: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = entries(published)["alpha"]["judged_with"]
    added = replace(CATALOGUE[0], id="envelope.new-requirement")
    monkeypatch.setattr(conformance.reporting.document, "CATALOGUE", (*CATALOGUE, added))
    publish(published, tmp_path, "beta")  # matrix build beta, with the new catalogue
    after = entries(published)
    assert after["alpha"]["judged_with"] == before
    assert after["beta"]["judged_with"]["catalogue_sha256"] == catalogue_sha256()  # type: ignore[index]
    assert [problem.split(":")[0] for problem in verify.problems(published)] == ["alpha"]
    # the top-level block is the suite of the last build, not a claim about every column
    assert build.load_manifest(published)["suite"]["catalogue_sha256"] == catalogue_sha256()


def test_a_column_that_did_not_run_is_never_stale(published: Path) -> None:
    manifest = build.load_manifest(published)
    manifest["peers"][0].update(state="did not start", judged_with={})
    (published / "matrix.json").write_text(json.dumps(manifest))
    assert verify.stale(published) == []
