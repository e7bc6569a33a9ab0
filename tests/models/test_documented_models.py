"""The three commands docs/server.md gives for a real model (fetch, serve, test) run as written.
Without the weights (CI), what runs cheaply runs: the serve command and the one-command builtin run
refuse the model at once, naming exactly the guide's fetch command. With them (`tox -e models`),
the three run for real and the suite passes."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.models.pinned import MODELS
from conformance.server.process import ServerProcess
from tests.models.test_real_models import folder_of
from tests.support.server_process import REPO
from tests.support.suite_runner import run_suite

GUIDE = REPO / "docs" / "server.md"
SCRIPT = Path(sys.executable).parent / "embedding-conformance"
LEAD = "Fetch once, serve, test"


def guide_commands() -> list[list[str]]:
    """The sh block after the lead-in, one command a line."""
    text = GUIDE.read_text(encoding="utf-8").split(LEAD, 1)[1]
    block = re.search(r"```sh\n(.*?)```", text, re.DOTALL)
    assert block is not None
    return [shlex.split(line) for line in block[1].splitlines() if line.strip()]


def builtin_one_liner() -> list[str]:
    """The guide's `pytest --endpoint builtin ...` that does the last two in one."""
    text = GUIDE.read_text(encoding="utf-8").split(LEAD, 1)[1]
    found = re.search(r"`(pytest --endpoint builtin [^`]+)`", text)
    assert found is not None
    return shlex.split(found[1])


def the_model() -> str:
    fetch, serve, test = guide_commands()
    assert fetch[:3] == ["embedding-conformance", "models", "fetch"] and len(fetch) == 4
    model = fetch[3]
    assert model in MODELS
    assert serve[:2] == ["embedding-conformance", "serve"] and serve[2:] == ["--model", model]
    assert test[0] == "pytest" and test[test.index("--model") + 1] == model
    assert builtin_one_liner()[builtin_one_liner().index("--model") + 1] == model
    return model


def test_unfetched_the_serve_and_builtin_commands_name_the_guides_fetch(tmp_path: Path) -> None:
    model = the_model()
    fetch, serve, _ = guide_commands()
    empty_cache = {**os.environ, "EMBEDDING_CONFORMANCE_CACHE": str(tmp_path / "cache")}
    served = subprocess.run(
        [str(SCRIPT), *serve[1:]], capture_output=True, text=True, env=empty_cache, timeout=60
    )
    assert served.returncode == 1, served.stderr
    assert f"'{shlex.join(fetch)}'" in served.stderr and served.stdout == ""
    run = run_suite(
        tmp_path, *builtin_one_liner()[1:], env={"EMBEDDING_CONFORMANCE_CACHE": str(tmp_path / "c")}
    )
    assert run.returncode == 4, run.output
    assert f"'{shlex.join(fetch)}'" in run.output and model in run.output


@pytest.mark.real_models
def test_fetched_the_three_commands_run_as_written_and_pass(tmp_path: Path) -> None:
    model = the_model()
    folder_of(MODELS[model])  # skips, saying how to fetch, when it is not fetched
    fetch, serve, test = guide_commands()
    fetched = subprocess.run([str(SCRIPT), *fetch[1:]], capture_output=True, text=True)
    assert fetched.returncode == 0, fetched.stderr
    assert "every file as pinned" in fetched.stderr
    # the server on a free port (8000 may be taken here), the test pointed at it
    with ServerProcess(*serve[2:], cwd=str(tmp_path)) as url:
        endpoint = test.index("--endpoint") + 1
        run = run_suite(tmp_path, *test[1:endpoint], url, *test[endpoint + 1 :])
    assert run.returncode == 0, run.output
    assert f"reference: bundled golden {model}/sentence-transformers" in run.output
