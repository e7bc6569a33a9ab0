"""The plugin is light where it is not used: pytest loads it in every run of every project where
the package is installed, so a run without ``--endpoint`` (and ``pytest --help``) imports only
what registering the options and the marker needs, never the session, numpy or requests.

Each case runs in a fresh interpreter, with the plugin loaded as pytest loads it and no other
third-party plugin (they may import numpy on their own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# What registering the options and the marker needs, and nothing else.
ALLOWED = {
    "conformance",
    "conformance.plugin",
    "conformance.options",  # the flags, ini keys and environment variables
    "conformance.api_key",  # where --api-key's value is found in the environment
    "conformance.run",  # its package: a docstring, nothing imported
    "conformance.run.session_keys",  # whether the run has a session
    "conformance.tolerances",  # --precision's choices, --max-response-mb's default
}
HEAVY = ("numpy", "requests", "cryptography", "urllib3")

# Runs pytest in this interpreter, then prints the modules loaded on a line of its own.
RUN_THEN_LIST = """
import json, sys, pytest
code = pytest.main(sys.argv[1:])
print("MODULES " + json.dumps(sorted(sys.modules)))
"""


def modules_after(directory: Path, *args: str) -> list[str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("EMBEDDINGS_") and key != "PYTEST_ADDOPTS"
    }
    environment["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", RUN_THEN_LIST, "-p", "conformance.plugin", *args],
        cwd=directory,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("MODULES ")]
    assert lines, done.stdout + done.stderr
    return list(json.loads(lines[-1].removeprefix("MODULES ")))


def project_modules(modules: list[str]) -> set[str]:
    return {m for m in modules if m == "conformance" or m.startswith("conformance.")}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project of its own, with one test, that does not use the suite."""
    (tmp_path / "test_own.py").write_text("def test_own():\n    assert True\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("-q", "-p", "no:cacheprovider"), id="a run"),
        pytest.param(("--help",), id="--help"),
        pytest.param(("--markers",), id="--markers"),
    ],
)
def test_a_run_without_endpoint_imports_only_option_registration(
    project: Path, args: tuple[str, ...]
) -> None:
    modules = modules_after(project, *args)
    assert project_modules(modules) == ALLOWED
    assert not [m for m in modules if m.split(".")[0] in HEAVY]


def test_the_plain_import_is_as_light() -> None:
    listing = "import json, sys, conformance.plugin; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", listing], capture_output=True, text=True, timeout=60, check=True
    )
    modules = json.loads(done.stdout)
    assert project_modules(modules) == ALLOWED
    assert not [m for m in modules if m.split(".")[0] in HEAVY]


def test_a_run_with_an_endpoint_loads_the_session(project: Path) -> None:
    """The other side of the same switch: given an endpoint, the suite is there."""
    modules = modules_after(project, "--collect-only", "-q", "--endpoint", "http://127.0.0.1:9")
    assert {"conformance.run.session", "conformance.suite.pytest_fixtures"} <= set(modules)
