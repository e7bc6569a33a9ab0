"""No upward imports from the verdict rules and the renderers: they may use what is below
them (checks, the catalogue, the corpus) and never the options, the session, the suite, the
references, the client or the server."""

from __future__ import annotations

import ast
from importlib import resources

import pytest

BELOW_VERDICTS = {"checks", "corpus", "requirements", "tolerances", "wire", "verdicts"}
ALLOWED = {
    "verdicts": BELOW_VERDICTS,
    "reporting": BELOW_VERDICTS | {"reporting", "files", ""},  # "": conformance.__version__
}


def imported_packages(package: str) -> dict[str, set[str]]:
    """Per module of ``conformance.<package>``, the conformance subpackages it imports."""
    found: dict[str, set[str]] = {}
    for entry in resources.files(f"conformance.{package}").iterdir():
        if not entry.name.endswith(".py"):
            continue
        modules = set()
        for node in ast.walk(ast.parse(entry.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            modules |= {n for n in names if n == "conformance" or n.startswith("conformance.")}
        found[entry.name] = {m.split(".")[1] if "." in m else "" for m in modules}
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_module_imports_a_layer_above_it(package: str) -> None:
    upward = {
        module: sorted(imports - ALLOWED[package])
        for module, imports in imported_packages(package).items()
        if imports - ALLOWED[package]
    }
    assert upward == {}
