"""The correct bundled server's one full suite run of a test session, shared by every test that
only reads its results: the README's shortest workflow (docs/ci/conformance.yml) run through the
action as a job runs it (tests/support/action_runner.py), its job environment making it a signed
certification run with an API key, the way a workflow passes secrets (EMBEDDINGS_API_KEY,
EMBEDDINGS_CERTIFY, EMBEDDINGS_SIGN_KEY: every option of the suite reads its environment
variable). The action's tests read what the action did; the reports' tests read the files.

The transports: this run is on the transport 'auto' picks (shared memory here); that base64
answers every request byte for byte alike is tests/server/test_machinery.py's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.support.action_runner import ActionRun, run_action, runner_environment
from tests.support.once import once
from tests.support.server_process import REPO
from tests.support.suite_runner import SuiteRun
from tests.test_packaging import NOT_SOURCE

SHORTEST = REPO / "docs" / "ci" / "conformance.yml"
PUBLISHED = "embedding-conformance/embedding-conformance@v1"  # how the workflows name the action
REPORT_DIR = "embedding-conformance-report"  # the action's default report-dir


@dataclass(frozen=True)
class Runner:
    """A runner's Python with the action's folder beside it; ``temp`` is one job's RUNNER_TEMP."""

    action: Path
    temp: Path
    env: dict[str, str]

    def act(
        self, workspace: Path, extra_env: dict[str, str] | None = None, **inputs: str
    ) -> ActionRun:
        workspace.mkdir(parents=True, exist_ok=True)
        env = {**self.env, **(extra_env or {})}
        return run_action(self.action, inputs, workspace, env, self.temp)


def make_runner(root: Path) -> Runner:
    """A runner's Python (what setup-python gives), in which the action's own install step puts
    the project: a venv that sees this environment's packages (a .pth line), so that pip
    installs the project from the action's folder and nothing else. The action's folder is a
    checkout of the repository as a runner has it: pip builds in it (build/, *.egg-info), so
    in a copy, never in this one."""
    action = root / "action"
    shutil.copytree(REPO, action, ignore=NOT_SOURCE)
    venv = root / "python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_path('purelib'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "outer.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    temp = root / "temp"
    temp.mkdir()
    return Runner(action, temp, runner_environment(venv / "bin"))


def shortest_inputs(endpoint: str) -> dict[str, str]:
    """The README's shortest workflow's inputs, its repository variable set to ``endpoint``."""
    workflow = yaml.safe_load(SHORTEST.read_text(encoding="utf-8"))
    (step,) = [s for job in workflow["jobs"].values() for s in job["steps"] if "uses" in s]
    assert step["uses"] == PUBLISHED
    return {
        k: str(v).replace("${{ vars.EMBEDDINGS_ENDPOINT }}", endpoint)
        for k, v in step["with"].items()
    }


def write_keys(folder: Path) -> tuple[Path, Path]:
    """A fresh Ed25519 key pair as PEM files (what ``openssl genpkey`` would give)."""
    key = Ed25519PrivateKey.generate()
    private, public = folder / "signing.pem", folder / "signing.pub.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


@dataclass(frozen=True)
class CertifiedRun:
    action: ActionRun
    folder: Path  # holds the workspace and the key pair

    @property
    def reports(self) -> Path:
        return self.folder / "workspace" / REPORT_DIR

    @property
    def public_key(self) -> Path:
        return self.folder / "signing.pub.pem"

    def suite(self) -> SuiteRun:
        """The run as the suite's own tests read one: exit status, what it printed, results."""
        results = json.loads((self.reports / "results.json").read_text(encoding="utf-8"))
        return SuiteRun(int(self.action.failed), self.action.log, results)


def certified_run(
    factory: pytest.TempPathFactory, endpoint: Callable[[], str], api_key: str
) -> CertifiedRun:
    """The run, made once for the whole test session whichever xdist worker asks first, of the
    correct server ``endpoint()`` gives (asked only by the worker that makes the run), which
    requires ``api_key``."""

    def certify(folder: Path) -> None:
        private, _ = write_keys(folder)
        runner = make_runner(folder / "runner")
        job_env = {
            "EMBEDDINGS_API_KEY": api_key,  # a workflow's env, from its secrets
            "EMBEDDINGS_CERTIFY": "true",
            "EMBEDDINGS_SIGN_KEY": str(private),
            # The server computes on one thread here (tests/conftest.py), and this run starts
            # first, beside CI's installs: the request of 32,000 tokens took 36 s so, past the
            # default 30 s (a FAIL of batch.documented-limits on a correct server).
            "EMBEDDINGS_REQUEST_TIMEOUT": "120",
        }
        run = runner.act(folder / "workspace", job_env, **shortest_inputs(endpoint()))
        (folder / "action.json").write_text(json.dumps(asdict(run)), encoding="utf-8")
        shutil.rmtree(folder / "runner")  # its venv and copy of the repository: 100 MB

    folder = once(factory, "certified-run", certify)
    saved = json.loads((folder / "action.json").read_text(encoding="utf-8"))
    return CertifiedRun(ActionRun(**saved), folder)
