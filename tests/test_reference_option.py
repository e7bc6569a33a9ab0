"""--reference as a user gives it: a damaged golden stops the run; 'none' says what is skipped."""

from __future__ import annotations

import shutil
from pathlib import Path

from conformance.references import bundled_golden
from tests.support.suite_runner import run_suite


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
        tmp_path, "--endpoint", clean_server, "--reference", "none", "-k", "reference or dimension"
    )
    assert run.returncode == 0, run.output
    assert run.status("reference.agreement") == "SKIPPED"
    assert "reference: none (give --reference to compare vectors)" in run.output
    assert "no reference (--reference none, or no bundled golden" in run.output
    # no reference and no --expect-dim: nothing to take the expected dimension from
    assert run.status("dimension.expected") == "SKIPPED"
