"""The judge and the judged load nothing of each other (DESIGN.md, principle 8): the reference
server imports none of the suite's modules, and a suite run against an external endpoint
imports nothing of the server.

Each side is looked at in a process of its own, because this test process has loaded both."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.suite_runner import run_suite

SERVER_PROBE = """
import importlib, json, pkgutil, sys
import conformance.server as server
for module in pkgutil.walk_packages(server.__path__, "conformance.server."):
    importlib.import_module(module.name)
import conformance.cli  # 'embedding-conformance serve' and 'worker' start here
print(json.dumps(sorted(sys.modules)))
"""
# The server's processes start from these (python -m conformance.server, the worker's module),
# and the engines are what decides pooling and normalization.
SERVER_ENTRY_MODULES = (
    "conformance.server.__main__",
    "conformance.server.worker",
    "conformance.server.frontend",
    "conformance.server.engines.sentence_transformers",
    "conformance.server.engines.vllm",
    "conformance.cli",
)
# The suite's packages: what judges, and what reads the server's answers for it.
SUITE_PACKAGES = (
    "conformance.checks",
    "conformance.client",
    "conformance.references",
    "conformance.run.expect",
    "conformance.suite",
    "conformance.options",
    "conformance.run.session",
    "conformance.run.canary",
    "conformance.reporting",
)

# Passed to the inner pytest with -p: writes the modules its process loaded when the run ends.
MODULES_DUMP = """
import json, os, sys

def pytest_sessionfinish(session):
    with open(os.environ["MODULES_DUMP"], "w") as out:
        json.dump(sorted(sys.modules), out)
"""


def within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_server_loads_nothing_of_the_suite() -> None:
    probe = subprocess.run([sys.executable, "-c", SERVER_PROBE], capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    loaded = json.loads(probe.stdout)
    assert set(SERVER_ENTRY_MODULES) <= set(loaded)  # the probe did import the server
    assert [m for m in loaded if within(m, SUITE_PACKAGES)] == []


def test_a_suite_run_against_an_endpoint_loads_nothing_of_the_server(
    tmp_path: Path, clean_server: str
) -> None:
    (tmp_path / "modules_dump.py").write_text(MODULES_DUMP)
    dump = tmp_path / "modules.json"
    run = run_suite(
        tmp_path,
        *("--endpoint", clean_server, "--requirements", "envelope.", "-p", "modules_dump"),
        env={"MODULES_DUMP": str(dump)},
    )
    assert run.returncode == 0, run.output
    loaded = json.loads(dump.read_text())
    assert {"conformance.run.session", "conformance.client.http"} <= set(loaded)  # the suite ran
    assert [m for m in loaded if within(m, ("conformance.server",))] == []


def test_the_rule_sees_what_it_must() -> None:
    assert within("conformance.references.sources", SUITE_PACKAGES)
    assert within("conformance.run.expect", SUITE_PACKAGES)
    assert not within("conformance.expectations", SUITE_PACKAGES)
    assert not within("conformance.server.model_folder", SUITE_PACKAGES)
    assert not within("conformance.runtime_dir", SUITE_PACKAGES)
