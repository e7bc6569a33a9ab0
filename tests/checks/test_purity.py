"""The checks are pure: importing them loads no pytest, no HTTP client and no option handling.

Run in a fresh interpreter, because this test process has loaded all of those already."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import importlib, json, pkgutil, sys
import conformance.checks as checks
for module in pkgutil.iter_modules(checks.__path__, "conformance.checks."):
    importlib.import_module(module.name)
print(json.dumps(sorted(sys.modules)))
"""
# Top-level packages, and modules of this project, that a pure check must never pull in.
FORBIDDEN_PACKAGES = {"pytest", "_pytest", "requests", "urllib3"}
FORBIDDEN_MODULES = ("conformance.client", "conformance.options", "conformance.expect")


def forbidden(module: str) -> bool:
    own = any(module == m or module.startswith(m + ".") for m in FORBIDDEN_MODULES)
    return own or module.split(".")[0] in FORBIDDEN_PACKAGES


def test_importing_every_check_loads_no_pytest_http_or_options() -> None:
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    loaded = json.loads(probe.stdout)
    assert "conformance.checks.vectors" in loaded  # the probe did import the checks
    assert [m for m in loaded if forbidden(m)] == []


def test_the_rule_sees_what_it_must() -> None:
    assert forbidden("pytest") and forbidden("_pytest.config") and forbidden("requests.api")
    assert forbidden("conformance.client.http") and forbidden("conformance.options")
    assert not forbidden("conformance.wire") and not forbidden("numpy")
