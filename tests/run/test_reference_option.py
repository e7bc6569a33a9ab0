"""--reference as a user gives it: a damaged golden stops the run; 'none' says loudly what is
skipped; without it, a bundled model served under another name is identified by its vectors."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.references import bundled_golden
from conformance.requirements import CATALOGUE, GATE_PREFIX
from tests.conftest import reference_server
from tests.support.suite_runner import run_suite

IN_PLAY = {r.id for r in CATALOGUE if not r.id.startswith(GATE_PREFIX)}  # no --baseline given
FAST = ("--fuzz-examples", "30")
# What identification decides: the reference applied, and the dimension it expects (the other
# requirements judge the server alike whatever name it serves the model under)
REFERENCED = ("--requirements", "reference.,dimension.")


@pytest.fixture(scope="module")
def alias() -> Iterator[str]:
    """One server of the bundled model served as 'all-minilm': correct on its /v1 routes, each
    fault under /faults/<name> (a route answers as a server started with --fault does:
    tests/server/test_fault_routes.py), so the module starts one server, not one per fault."""
    with reference_server("--fault-routes", "--served-model-name", "all-minilm") as base_url:
        yield base_url


def test_a_damaged_golden_is_a_usage_error(clean_server: str, tmp_path: Path) -> None:
    source = bundled_golden("all-MiniLM-L6-v2")
    assert source is not None
    damaged = tmp_path / "damaged"
    shutil.copytree(source, damaged)
    (damaged / "vectors.npy").write_bytes(b"not an array")
    run = run_suite(tmp_path, "--endpoint", clean_server, "--reference", f"golden:{damaged}")
    assert run.returncode == 4
    assert "vectors.npy: sha256 differs from the manifest" in run.output


def test_without_a_reference_the_comparisons_are_skipped_with_the_reason(
    clean_server: str, tmp_path: Path
) -> None:
    run = run_suite(
        tmp_path,
        "--endpoint",
        clean_server,
        "--reference",
        "none",
        "-k",
        "reference or dimension or token_ids or counts_its_tokens",
    )
    assert run.returncode == 0, run.output
    assert run.status("reference.agreement") == "SKIPPED"
    assert run.status("usage.counts-tokens") == "SKIPPED"
    # token ids from the judged server itself: used, but not taken for the truth
    assert run.status("input.token-ids") == "PASS"
    assert "token ids from the server's own /tokenize (no reference tokenizer)" in run.output
    assert "not applicable: --reference none (vectors not compared" in run.output
    # as loud as a failure: in the header, the summary and the final line
    assert "reference: none: VECTORS NOT COMPARED WITH ANY REFERENCE" in run.output
    assert "--reference none: the reference.* requirements were not run" in run.output
    final = next(line for line in run.output.splitlines() if line.startswith("conformance: "))
    assert final.endswith("; vectors not compared with any reference"), final
    # no reference and no --expect-dim: nothing to take the expected dimension from
    assert run.status("dimension.expected") == "SKIPPED"


def test_a_bundled_model_served_under_an_alias_is_identified_by_its_vectors(
    tmp_path: Path, alias: str
) -> None:
    run = run_suite(tmp_path, "--endpoint", alias, *REFERENCED)
    assert run.returncode == 0, run.output
    assert "identified by its vectors as all-MiniLM-L6-v2" in run.output
    assert "served as 'all-minilm'" in run.output
    judged = {r for r in IN_PLAY if r.startswith(("reference.", "dimension."))}
    assert run.with_status("PASS") == judged, run.output


def test_one_vector_for_every_input_under_an_alias_is_never_green(
    tmp_path: Path, alias: str
) -> None:
    """Matched by name only, no reference applied and every vector requirement passed."""
    url = f"{alias}/faults/one-vector"
    run = run_suite(tmp_path, "--endpoint", url, *FAST)
    unreferenced = run_suite(
        tmp_path, "--endpoint", url, "--reference", "none", "--requirements", "semantics."
    )
    # with --reference none, the checks that need no reference see it
    assert unreferenced.returncode == 1, unreferenced.output
    assert {
        "semantics.distinct-texts",
        "semantics.not-a-prefix",
        "semantics.paraphrase-closer",
    } <= unreferenced.with_status("FAIL"), unreferenced.output
    assert run.returncode == 4, run.output
    assert "no reference for model 'all-minilm'" in run.output
    assert "The closest is all-MiniLM-L6-v2/sentence-transformers (1 - cosine up to" in run.output
    assert "its vectors are wrong" in run.output and "--reference none" in run.output
    assert run.results is None  # stopped before any test


def test_an_unknown_model_with_no_reference_stops_with_the_ways_out(
    hostile_server: str, tmp_path: Path
) -> None:
    """The hostile server's 'no-models' answers valid envelopes of made-up vectors."""
    run = run_suite(
        tmp_path, "--endpoint", f"{hostile_server}/no-models/v1", "--model", "hostile-model"
    )
    assert run.returncode == 4, run.output
    assert "no reference for model 'hostile-model'" in run.output
    assert "--reference golden:DIR" in run.output and "--reference none" in run.output


def test_a_per_token_server_under_an_alias_fails_the_dimension_requirement(
    tmp_path: Path, alias: str
) -> None:
    """Vectors whose length grows with the input match no golden, and no reference would make
    them right: not a usage error (exit 4) but a FAIL of dimension.consistent (exit 1), judged
    on the identification's answer, in the terminal and in results.json; nothing else runs."""
    run = run_suite(tmp_path, "--endpoint", f"{alias}/faults/per-token", *FAST)
    assert run.returncode == 1, run.output
    assert run.with_status("FAIL") == {"dimension.consistent"}, run.output
    assert run.with_status("NOT RUN") == IN_PLAY - {"dimension.consistent"}
    assert "vectors of different lengths" in run.output
    assert "cannot be stacked" in run.output
    assert re.search(r"FAIL\s+MUST\s+dimension\.consistent\s+measured \d+ vs == 0", run.output)
    assert run.results is not None and run.results["verdict"] == "FAIL"
    (entry,) = [r for r in run.results["requirements"] if r["id"] == "dimension.consistent"]
    (failure,) = entry["failures"]
    assert failure["test"] == "reference identification"
    assert "cannot be stacked" in failure["detail"]
    assert failure["reproducer"].startswith("curl ")
    assert "reference: none identified: dimension.consistent FAILED" in run.output
    assert "conformance: 0 passed, 1 failed" in run.output
