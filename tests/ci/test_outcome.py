"""The CI step's verdict and outputs from a results document or from a run that wrote none, and
the runner files they go to."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.ci import github, outcome
from conformance.ci.cli import suite_arguments
from conformance.cli import build_parser

NO_ANSWER = (
    "ERROR: embedding-conformance preflight failed: no usable answer from the endpoint: "
    "POST http://127.0.0.1:9/v1/embeddings: connection refused\n"
)


def requirement(level: str, status: str) -> dict[str, str]:
    return {"id": f"x.{level}.{status}", "level": level, "status": status}


def test_the_outcome_counts_musts_only() -> None:
    document = {
        "verdict": "FAIL",
        "requirements": [
            requirement("MUST", "PASS"),
            requirement("MUST", "PASS"),
            requirement("MUST", "FAIL"),
            requirement("MUST", "UNSUPPORTED"),
            requirement("SHOULD", "FAIL"),
        ],
        "certification": {"certified": False, "reasons": ["x FAIL (MUST)"]},
    }
    result = outcome.from_results(document)
    assert (result.verdict, result.must_passed, result.must_failed) == ("FAIL", 2, 1)
    assert result.outputs("r.json") == {
        "verdict": "FAIL",
        "must-passed": "2",
        "must-failed": "1",
        "certified": "false",
        "results": "r.json",
    }
    assert outcome.from_results({"verdict": "PASS"}).outputs("")["certified"] == ""


def test_no_answer_is_unreachable_and_other_usage_errors_are_errors() -> None:
    unreachable = outcome.without_results("collected 0 items\n" + NO_ANSWER)
    assert unreachable.verdict == "UNREACHABLE"
    assert unreachable.message.startswith("embedding-conformance preflight failed: no usable")
    assert "unreachable" in outcome.summary_without_results(unreachable)
    refused = outcome.without_results(
        "ERROR: embedding-conformance preflight failed: http://x/v1/embeddings refused the "
        "credentials (HTTP 401): pass --api-key\n"
    )
    assert refused.verdict == "ERROR" and "HTTP 401" in refused.message
    crashed = outcome.without_results("Traceback ...\nKeyError: 'x'\n")
    assert crashed.verdict == "ERROR" and crashed.message.endswith("KeyError: 'x'")
    assert "could not run" in outcome.summary_without_results(crashed)


def test_outputs_and_summaries_go_to_the_runner_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output, summary = tmp_path / "output", tmp_path / "summary"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    github.set_outputs({"verdict": "PASS", "diff": "a\nb"})
    github.append_summary("# one")
    github.append_summary("two\n")
    lines = output.read_text().splitlines()
    assert lines[0] == "verdict=PASS"
    delimiter = lines[1].removeprefix("diff<<")
    assert lines[2:] == ["a", "b", delimiter] and delimiter.startswith("EOF_")
    assert summary.read_text() == "# one\ntwo\n"


def test_outside_a_runner_they_are_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    github.set_outputs({"verdict": "FAIL"})
    github.append_summary("## summary")
    assert capsys.readouterr().out == "verdict=FAIL\n## summary\n"


def parse(*argv: str) -> list[str]:
    args = build_parser().parse_args(["ci", "run", *argv])
    return suite_arguments(args)


def test_empty_inputs_are_left_out_of_the_suites_command_line() -> None:
    assert parse("--endpoint", "http://h", "--report-dir", "r", "--model", "", "--certify", "") == [
        "--endpoint",
        "http://h",
        "--report-dir",
        "r",
    ]
    full = parse(
        *("--endpoint", "http://h", "--report-dir", "r", "--model", "m", "--precision", "fp16"),
        *("--certify", "true", "--baseline", "b", "--pytest-args", "-k 'base64 or usage' -x"),
    )
    assert full[4:] == [
        *("--model", "m", "--precision", "fp16", "--baseline", "b", "--certify"),
        *("-k", "base64 or usage", "-x"),
    ]


def test_certify_takes_only_true_or_false(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("--endpoint", "http://h", "--report-dir", "r", "--certify", "maybe")
    assert "expected true or false, got 'maybe'" in capsys.readouterr().err
