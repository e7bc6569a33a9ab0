"""The pure layers stay pure: importing every module of the checks, the verdict rules or the
renderers loads no pytest and no HTTP client, and of this project only the rooms below them.

Run in a fresh interpreter, because this test process has loaded all of those already."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for module in pkgutil.iter_modules(package.__path__, sys.argv[1] + "."):
    importlib.import_module(module.name)
print(json.dumps(sorted(sys.modules)))
"""
FORBIDDEN_PACKAGES = {"pytest", "_pytest", "requests", "urllib3"}
CHECKS = {"checks", "tolerances", "wire"}
VERDICTS = CHECKS | {"verdicts", "requirements", "corpus"}
# Of this project, what importing each pure package may load (conformance.<room>).
MAY_LOAD = {
    "checks": CHECKS,
    "verdicts": VERDICTS,
    "reporting": VERDICTS | {"reporting", "files"},
}


def room(module: str) -> str:
    return module.split(".")[1] if module.startswith("conformance.") else ""


def loaded_by(package: str) -> list[str]:
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, f"conformance.{package}"], capture_output=True, text=True
    )
    assert probe.returncode == 0, probe.stderr
    loaded: list[str] = json.loads(probe.stdout)
    return loaded


def impure(module: str, package: str) -> bool:
    if module.split(".")[0] in FORBIDDEN_PACKAGES:
        return True
    return bool(room(module)) and room(module) not in MAY_LOAD[package]


@pytest.mark.parametrize("package", sorted(MAY_LOAD))
def test_importing_a_pure_package_loads_no_pytest_http_or_higher_room(package: str) -> None:
    loaded = loaded_by(package)
    assert f"conformance.{package}" in loaded  # the probe did import it
    assert [m for m in loaded if impure(m, package)] == []


def test_the_rule_sees_what_it_must() -> None:
    assert impure("pytest", "checks") and impure("_pytest.config", "reporting")
    assert impure("requests.api", "verdicts") and impure("conformance.client.http", "checks")
    assert impure("conformance.run.expect", "verdicts")
    assert impure("conformance.options", "reporting")
    assert impure("conformance.verdicts.tally", "checks")
    assert not impure("conformance.wire", "checks") and not impure("numpy", "checks")
    assert not impure("conformance.verdicts.tally", "reporting")
