"""The GitHub Action (action.yml) and the example workflows (docs/ci/): GitHub's own validators
pass them and fail a planted mistake, and the action's steps, run here in order as a runner
would (tests/support/action_runner.py), judge the bundled server: green when it is correct, red
with the right summary for a fault and for a regression against a baseline, and an unreachable
endpoint reported as such. The action installs the project from its own folder into a Python of
the test's (pip install, as on a runner). The README's workflow's run is the session's one full
run of the correct server, which the reports' tests read too (tests/support/certified_run.py)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from tests.conftest import API_KEY, FaultRoute
from tests.e2e.test_suite_verdicts import IN_PLAY
from tests.support.certified_run import (
    PUBLISHED,
    REPORT_DIR,
    SHORTEST,
    Runner,
    certified_run,
    make_runner,
)
from tests.support.server_process import REPO

WORKFLOWS = sorted((REPO / "docs" / "ci").glob("*.yml"))
NARROW = "--requirements reference.agreement"  # one requirement: seconds, not minutes


def tool(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def actionlint(project: Path) -> subprocess.CompletedProcess[str]:
    """actionlint over a project holding the workflows, with the published action's name
    replaced by the local action ('./'), so that every input they give is checked against
    action.yml."""
    (project / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return subprocess.run(
        [tool("actionlint"), "-no-color"], cwd=project, capture_output=True, text=True
    )


def local_project(tmp_path: Path, workflows: dict[str, str], action: str) -> Path:
    project = tmp_path / "project"
    (project / ".github" / "workflows").mkdir(parents=True)
    (project / "action.yml").write_text(action, encoding="utf-8")
    for name, text in workflows.items():
        local = text.replace(PUBLISHED, "./")
        (project / ".github" / "workflows" / name).write_text(local, encoding="utf-8")
    return project


def schema_check(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    command = [tool("check-jsonschema"), "--builtin-schema", f"vendor.{schema}", *map(str, files)]
    return subprocess.run(command, capture_output=True, text=True)


def test_the_action_and_the_workflows_pass_the_validators(tmp_path: Path) -> None:
    action = schema_check("github-actions", REPO / "action.yml")
    assert action.returncode == 0, action.stdout + action.stderr
    workflows = schema_check("github-workflows", *WORKFLOWS)
    assert workflows.returncode == 0, workflows.stdout + workflows.stderr
    texts = {path.name: path.read_text(encoding="utf-8") for path in WORKFLOWS}
    assert all(PUBLISHED in text for text in texts.values())
    linted = actionlint(local_project(tmp_path, texts, (REPO / "action.yml").read_text()))
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_the_validators_fail_planted_mistakes(tmp_path: Path) -> None:
    action = (REPO / "action.yml").read_text(encoding="utf-8")
    without_shell = tmp_path / "action.yml"  # a composite step's 'shell' is required
    without_shell.write_text(action.replace("      shell: bash\n", "", 1), encoding="utf-8")
    refused = schema_check("github-actions", without_shell)
    assert refused.returncode == 1 and "shell" in refused.stdout + refused.stderr

    shortest = SHORTEST.read_text(encoding="utf-8")
    misspelt = tmp_path / "misspelt.yml"  # 'step' for 'steps'
    misspelt.write_text(shortest.replace("    steps:", "    step:"), encoding="utf-8")
    assert schema_check("github-workflows", misspelt).returncode == 1

    unknown_input = shortest.replace("          endpoint:", "          endpoint-url:")
    linted = actionlint(local_project(tmp_path, {"ci.yml": unknown_input}, action))
    assert linted.returncode == 1
    assert 'input "endpoint-url" is not defined in action' in linted.stdout
    assert 'missing input "endpoint" which is required' in linted.stdout


def test_the_readme_leads_its_ci_section_with_the_shortest_workflow() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## In CI") :]
    first_block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert first_block is not None
    assert first_block.group(1) == SHORTEST.read_text(encoding="utf-8")


# --- the action's steps, run -------------------------------------------------------------------


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runner]:
    """One job's runner: the module's runs are its steps, one after another."""
    root = tmp_path_factory.mktemp("runner")
    yield make_runner(root)
    shutil.rmtree(root, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_the_readme_workflow_certifies_the_correct_server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> None:
    """The README's workflow as written, its job's environment giving the API key and making
    it a signed certification run (tests/support/certified_run.py; the session's one full run
    of the correct server): every requirement PASS, through the action."""
    server = partial(request.getfixturevalue, "auth_server")  # started only if this makes the run
    certified = certified_run(tmp_path_factory, server, API_KEY)
    run = certified.action
    assert not run.failed, run.log
    assert run.ran == ["Install embedding-conformance", "Run the suite"], run.log
    assert run.skipped == ["Start the server", "Compare with the baseline", "Stop the server"]
    assert run.uses == ["actions/setup-python@v6", "actions/cache@v5", "actions/upload-artifact@v6"]
    results = certified.suite().results
    assert results is not None
    passed = {r["id"] for r in results["requirements"] if r["status"] == "PASS"}
    assert passed == IN_PLAY, run.log
    musts = [r for r in results["requirements"] if r["level"] == "MUST"]
    assert run.outputs["verdict"] == "PASS" == results["verdict"]
    assert run.outputs["must-passed"] == str(len(musts)) and run.outputs["must-failed"] == "0"
    assert run.outputs["results"] == f"{REPORT_DIR}/results.json"
    assert run.outputs["certified"] == "true" and run.outputs["regressed"] == ""
    assert "reference: bundled golden all-MiniLM-L6-v2/sentence-transformers" in run.log
    summary = (certified.reports / "summary.md").read_text(encoding="utf-8")
    assert run.summary == summary and "PASS" in summary


# One test, one runner: the action installs itself once (as in one job) and its runs follow one
# another, as a job's steps do.
@pytest.mark.slow
def test_the_actions_steps_judge_the_bundled_server(
    runner: Runner, tmp_path: Path, fault_route: FaultRoute
) -> None:
    baseline = started_server_is_judged_saved_as_a_baseline_and_stopped(runner, tmp_path / "saved")
    fault_fails_and_its_regression_is_diffed_first(
        runner, tmp_path / "fault", fault_route, baseline
    )
    unreachable_endpoint_is_reported_as_such(runner, tmp_path / "unreachable", baseline)


def started_server_is_judged_saved_as_a_baseline_and_stopped(
    runner: Runner, tmp_path: Path
) -> Path:
    """serve-command: the bundled server started by the action, judged (in a workspace whose
    own pytest.ini and conftest.py would break a plain pytest run there), its vectors and
    results saved as a baseline, then stopped with all it spawned."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "pytest.ini").write_text("[pytest]\naddopts = --no-such-option\n")
    (workspace / "conftest.py").write_text("raise SystemExit('the workspace conftest ran')\n")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    run = runner.act(
        tmp_path / "workspace",
        endpoint=base,
        **{
            "serve-command": f"{sys.executable} -m conformance.server --port {port}",
            "pytest-args": NARROW,
            "save-baseline": "baseline",
            "upload-artifact": "false",
        },
    )
    assert not run.failed, run.log
    assert run.ran[-1] == "Stop the server" and "server stopped" in run.log
    assert f"{base}/health answers after" in run.log  # the default ready URL
    assert run.outputs["verdict"] == "PASS"
    saved = workspace / "baseline"
    assert {"manifest.json", "vectors.npy", "results.json"} <= {p.name for p in saved.iterdir()}
    with socket.socket() as probe:  # nothing left listening
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    assert not (runner.temp / "embedding-conformance-server.pid").exists()
    assert (workspace / "embedding-conformance-report" / "server.log").exists()
    return saved


def fault_fails_and_its_regression_is_diffed_first(
    runner: Runner, tmp_path: Path, fault_route: FaultRoute, baseline: Path
) -> None:
    """A fault fails the step, the suite's summary naming the failing MUST; the same run
    against the saved baseline (the old server's vectors and verdicts) is a regression, and
    the diff, regressions first, goes to the summary and to a file."""
    endpoint = fault_route("cls-pooling")
    run = runner.act(
        tmp_path / "workspace", endpoint=endpoint, baseline=str(baseline), **{"pytest-args": NARROW}
    )
    assert run.failed
    assert run.outputs["verdict"] == "FAIL" and run.outputs["must-failed"] == "1"
    suite_summary = run.summary.split("### embedding-conformance: compared with")[0]
    assert "reference.agreement" in suite_summary and "FAIL" in suite_summary
    assert run.ran[-1] == "Compare with the baseline"
    assert run.outputs["regressed"] == "true"
    diff = (tmp_path / "workspace" / run.outputs["diff"]).read_text(encoding="utf-8")
    assert "| reference.agreement | MUST | PASS | FAIL | regression |" in diff
    assert "compared with the baseline" in run.summary and diff in run.summary


def unreachable_endpoint_is_reported_as_such(
    runner: Runner, tmp_path: Path, baseline: Path
) -> None:
    """A drift watch's endpoint that does not answer: UNREACHABLE, not drift; no diff."""
    unreachable = f"http://127.0.0.1:{free_port()}"
    run = runner.act(tmp_path / "workspace", endpoint=unreachable, baseline=str(baseline))
    assert run.failed
    assert run.outputs["verdict"] == "UNREACHABLE" and run.outputs["results"] == ""
    assert "Compare with the baseline" in run.skipped
    assert "the endpoint is unreachable: nothing was judged" in run.summary
    assert "preflight failed: no usable answer from the endpoint" in run.summary
