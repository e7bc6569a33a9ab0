"""The upgrade gate as the README's recipe runs it: record the old server, run the suite on it,
then judge the new server against that baseline. Both are routes of the session's shared
fault-routes server (tests/server/test_fault_routes.py shows a route answers as a server
started with --fault does): no server of the gate's own is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main
from tests.conftest import FaultRoute
from tests.support.suite_runner import SuiteRun, run_suite

# The gate's own requirements and one the faults below turn each way; every other requirement
# would only cost time (the correct server's full runs are tests/e2e/test_suite_verdicts.py's part).
JUDGED = "baseline.,reference.agreement,input.token-ids,errors.rejected,envelope.usage"
FAST = ("--fuzz-examples", "20", "--requirements", JUDGED)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory, clean_server: str) -> Path:
    """Steps 1 and 2 of the recipe, against a correct 'old' server."""
    directory = tmp_path_factory.mktemp("gate") / "baseline"
    old = clean_server
    record = ["golden", "record", "--from-endpoint", old, "--out", str(directory), "--quiet"]
    assert main(record) == 0
    run = run_suite(directory, "--endpoint", old, *FAST)  # writes baseline/results.json
    assert run.returncode == 0, run.output
    return directory


def gate(tmp_path: Path, baseline: Path, new: str) -> SuiteRun:
    """Step 4: the suite against the 'new' server with --baseline."""
    return run_suite(tmp_path, "--endpoint", new, "--baseline", str(baseline), *FAST)


def test_an_unchanged_server_passes_the_gate(
    tmp_path: Path, baseline: Path, fault_route: FaultRoute
) -> None:
    run = gate(tmp_path, baseline, fault_route())
    assert run.returncode == 0, run.output
    for requirement in ("baseline.vectors", "baseline.shape", "baseline.errors"):
        assert run.status(requirement) == "PASS"
    assert "no requirement does worse than in the baseline's run" in run.output
    assert run.results is not None and run.results["baseline"]["regressions"] == []


def test_drifted_vectors_are_caught(
    tmp_path: Path, baseline: Path, fault_route: FaultRoute
) -> None:
    run = gate(tmp_path, baseline, fault_route("fp16-vectors"))
    assert run.returncode == 1
    assert run.status("baseline.vectors") == "FAIL"
    assert "[MUST baseline.vectors]" in run.output and "max |Δ| per input, worst" in run.output
    assert "REGRESSION reference.agreement: PASS before, FAIL now" in run.output


def test_a_lost_feature_is_a_regression_even_when_nothing_fails(
    tmp_path: Path, baseline: Path, fault_route: FaultRoute
) -> None:
    run = gate(tmp_path, baseline, fault_route("token-ids-rejected"))
    assert run.with_status("FAIL") == set(), run.output
    assert "REGRESSION input.token-ids: PASS before, UNSUPPORTED now" in run.output
    assert run.returncode == 1


def test_changed_error_answers_are_caught(
    tmp_path: Path, baseline: Path, fault_route: FaultRoute
) -> None:
    run = gate(tmp_path, baseline, fault_route("500-on-bad-input"))
    assert run.status("baseline.errors") == "FAIL"
    assert "HTTP 400 before, HTTP 500 now" in run.output


def test_a_dropped_field_is_caught(tmp_path: Path, baseline: Path, fault_route: FaultRoute) -> None:
    run = gate(tmp_path, baseline, fault_route("missing-usage"))
    assert run.status("baseline.shape") == "FAIL"
    assert "fields lost or retyped: float output: usage" in run.output


def test_results_json_alone_compares_statuses_only(
    tmp_path: Path, baseline: Path, clean_server: str
) -> None:
    alone = str(baseline / "results.json")
    run = run_suite(tmp_path, "--endpoint", clean_server, "--baseline", alone, *FAST)
    assert run.returncode == 0, run.output
    assert run.status("baseline.vectors") == "SKIPPED"
    assert "the baseline is a results.json alone" in run.output
    assert "no requirement does worse" in run.output


def test_a_missing_baseline_is_a_usage_error(clean_server: str, tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", clean_server, "--baseline", "/no/such/dir")
    assert run.returncode == 4
    assert "--baseline /no/such/dir: no such file or directory" in run.output
