"""The suite against a real server: a correct one passes, each planted bug fails where it should."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.requirements import CATALOGUE
from tests.support.suite_runner import run_suite

# fault mode of the test server -> requirements that must FAIL on it (others may fail too).
MUTATIONS = {
    "fault/per-token": {"dimension.fixed-across-lengths", "envelope.embedding-number-array"},
    "fault/no-normalize": {"normalization.unit-norm"},
    "fault/big-endian-base64": {"base64.float-parity", "base64.openai-client"},
    "fault/base64-ignored": {"base64.honoured"},
    "fault/rows-reversed": {"batch.single-vs-batch", "batch.permutation"},
    "fault/padding-unmasked": {"batch.single-vs-batch"},
    "fault/noise": {"determinism.repeat"},
    "fault/cross-talk": {"concurrency.isolation"},
    "fault/dimensions-ignored": {"dimensions.honoured"},
    "fault/dimensions-not-renormalized": {"dimensions.renormalized"},
    "fault/500-on-bad-input": {"errors.rejected", "fuzz.robust"},
    "fault/empty-input-200": {"errors.rejected"},
    "fault/nan-whitespace": {"finite.values"},
    "fault/token-ids-as-text": {"input.token-ids", "input.token-id-arrays"},
}


def test_correct_server_passes_every_requirement(model_server: str, tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", f"{model_server}/clean", "--expect-dim", "384")
    assert run.returncode == 0, run.output
    assert run.with_status("PASS") == {r.id for r in CATALOGUE}, run.output
    assert f"conformance: {len(CATALOGUE)} passed, 0 failed, 0 unsupported, 0 skipped" in run.output


@pytest.mark.parametrize("fault", sorted(MUTATIONS))
def test_planted_bug_fails_the_right_requirement(
    model_server: str, tmp_path: Path, fault: str
) -> None:
    run = run_suite(tmp_path, "--endpoint", f"{model_server}/{fault}")
    assert run.returncode == 1, run.output
    failed = run.with_status("FAIL")
    assert MUTATIONS[fault] <= failed, f"{fault}: failed {sorted(failed)}\n{run.output}"
    for requirement_id in MUTATIONS[fault]:
        assert f"MUST {requirement_id}]" in run.output  # the failure message names it
    assert "reproduce: curl" in run.output


def test_failure_message_explains_itself(model_server: str, tmp_path: Path) -> None:
    run = run_suite(
        tmp_path,
        "--endpoint",
        f"{model_server}/fault/no-normalize",
        "-k",
        "test_batch_has_unit_norm",
    )
    message = run.output[run.output.index("[MUST normalization.unit-norm]") :]
    assert "measured" in message and "vs allowed <= 0.001" in message
    assert "input: case 'batch-" in message
    assert f"reproduce: curl -sS {model_server}/fault/no-normalize/v1/embeddings" in message


def test_parallel_run_with_xdist(model_server: str, tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", f"{model_server}/clean", "-n", "2")
    assert run.returncode == 0, run.output
    assert run.status("concurrency.isolation") == "PASS"
    assert (
        f"conformance: {len(CATALOGUE) - 1} passed, 0 failed, 0 unsupported, 1 skipped"
        in run.output
    )


def test_parallel_run_still_fails_a_broken_server(model_server: str, tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", f"{model_server}/fault/no-normalize", "-n", "2")
    assert run.returncode == 1, run.output
    assert run.with_status("FAIL") == {"normalization.unit-norm"}


def test_core_profile_runs_only_core_requirements(model_server: str, tmp_path: Path) -> None:
    run = run_suite(
        tmp_path, "--endpoint", f"{model_server}/clean", "--conformance-profile", "core"
    )
    assert run.returncode == 0, run.output
    assert run.status("batch.single-vs-batch") == "NOT RUN"
    assert run.status("normalization.unit-norm") == "PASS"


def test_cleanly_refusing_an_optional_feature_is_unsupported(
    model_server: str, tmp_path: Path
) -> None:
    run = run_suite(tmp_path, "--endpoint", f"{model_server}/fault/token-ids-rejected")
    assert run.returncode == 0, run.output
    assert run.status("input.token-ids") == "UNSUPPORTED"
    assert run.status("input.token-id-arrays") == "UNSUPPORTED"
    assert "token-id input cleanly rejected with HTTP 400" in run.output


def test_fuzzing_reports_the_planted_5xx_with_a_reproducer(
    model_server: str, tmp_path: Path
) -> None:
    run = run_suite(tmp_path, "--endpoint", f"{model_server}/fault/500-on-bad-input", "-k", "fuzz")
    assert run.status("fuzz.robust") == "FAIL"
    message = run.output[run.output.index("[MUST fuzz.robust]") :]
    assert "measured HTTP 500 vs allowed < 500" in message
    assert "reproduce: curl" in message
