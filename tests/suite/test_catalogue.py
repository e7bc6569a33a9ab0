"""Each requirement is judged in one place: the catalogue binds every id to one function of its
family's check module, and the packaged suite judges each test's id through that function.

The suite side is read statically (its source, with ``ast``), so no endpoint is needed: a test
with a literal ``requirement`` marker may name no check function but its own id's."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import conformance.checks as checks
import conformance.suite as suite
from conformance.checks import CheckResult, status
from conformance.corpus import load_bad_requests
from conformance.requirements import BY_CHECK, CATALOGUE, Requirement

CHECKS = "conformance.checks"
FAMILIES = {r.id.split(".")[0].replace("-", "_") for r in CATALOGUE}
# Modules of shared tools: they judge no requirement; a family module binds them to one.
TOOLS = {"result", "status", "compare", "agreement", "vectors"}
# Verdicts of a tool the suite may give any requirement: the request got no answer at all.
ANY_REQUIREMENT = {status.no_answer}
SUITE_FILES = sorted(Path(suite.__file__).parent.glob("*.py"))
# Every module but the catalogue: where an id may be spelled only in a marker.
PACKAGE = Path(checks.__file__).parent.parent
PACKAGE_FILES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "requirements.py")


def family_module(requirement: Requirement) -> str:
    return f"{CHECKS}.{requirement.id.split('.')[0].replace('-', '_')}"


def resolve(dotted: str) -> Any:
    """The module or the function ``dotted`` names (a submodule is imported, not looked up as
    an attribute: that would depend on what this process happened to import before)."""
    module, _, name = dotted.rpartition(".")
    parent = importlib.import_module(module)
    if hasattr(parent, "__path__") and importlib.util.find_spec(dotted) is not None:
        return importlib.import_module(dotted)
    return getattr(parent, name)


@pytest.mark.parametrize("requirement", CATALOGUE, ids=lambda r: r.id)
def test_each_requirement_is_bound_to_a_function_of_its_family_module(
    requirement: Requirement,
) -> None:
    module, _, name = requirement.check.rpartition(".")
    assert module == family_module(requirement)
    check = resolve(requirement.check)
    assert inspect.isfunction(check)
    assert (check.__module__, check.__qualname__) == (module, name)  # defined there, not imported
    assert check.__doc__, f"{requirement.check} says what it measures and why"


def test_no_two_requirements_share_a_check() -> None:
    assert len(BY_CHECK) == len(CATALOGUE)
    assert len({id(resolve(r.check)) for r in CATALOGUE}) == len(CATALOGUE)


def test_every_check_module_is_a_family_module_or_a_tool() -> None:
    modules = {m.name for m in pkgutil.iter_modules(checks.__path__)}
    assert modules == FAMILIES | TOOLS
    bound_in = {r.check.rpartition(".")[0].rpartition(".")[2] for r in CATALOGUE}
    assert bound_in == FAMILIES  # every family module judges, no tool module does


# The suite, read statically


def requirement_marked(decorator: ast.expr) -> str | None:
    """The id of a literal ``@pytest.mark.requirement("id")`` decorator."""
    if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)):
        return None
    if decorator.func.attr != "requirement" or not decorator.args:
        return None
    first = decorator.args[0]
    return first.value if isinstance(first, ast.Constant) else None


def check_imports(tree: ast.Module) -> dict[str, Any]:
    """Local name -> the module or function of conformance.checks it was imported as."""
    names: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(CHECKS):
            for alias in node.names:
                names[alias.asname or alias.name] = resolve(f"{node.module}.{alias.name}")
    return names


def referenced_checks(node: ast.AST, imports: dict[str, Any]) -> Iterator[Any]:
    """The functions of conformance.checks that ``node`` names (``module.f`` or ``f``), but not
    inside ``judged_by(...)``: there a check only names its requirement (a failure's cause)."""
    naming = {
        id(argument)
        for call in ast.walk(node)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "judged_by"
        for argument in ast.walk(call)
    }
    for inner in ast.walk(node):
        if id(inner) in naming:
            continue
        if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name):
            owner = imports.get(inner.value.id)
            if inspect.ismodule(owner) and inspect.isfunction(getattr(owner, inner.attr, None)):
                yield getattr(owner, inner.attr)
        elif isinstance(inner, ast.Name) and inspect.isfunction(imports.get(inner.id)):
            yield imports[inner.id]


def judged(function: Callable[..., Any]) -> str | None:
    """The requirement a function is bound to, if any."""
    requirement = BY_CHECK.get(f"{function.__module__}.{function.__qualname__}")
    return None if requirement is None else requirement.id


def gives_verdicts(function: Callable[..., Any]) -> bool:
    returns = inspect.signature(function, eval_str=True).return_annotation
    return returns is CheckResult or "CheckResult" in str(returns)


def marked_tests(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef, str]]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                marked = requirement_marked(decorator)
                if marked is not None:
                    yield node, marked


@pytest.mark.parametrize("path", SUITE_FILES, ids=lambda p: p.name)
def test_a_marked_test_judges_its_id_with_its_bound_check_only(path: Path) -> None:
    tree = ast.parse(path.read_text())
    imports = check_imports(tree)
    for test, marked in marked_tests(tree):
        used = set(referenced_checks(test, imports))
        own = resolve(next(r.check for r in CATALOGUE if r.id == marked))
        others = {f"{f.__module__}.{f.__name__}" for f in used if judged(f) not in (None, marked)}
        assert not others, f"{path.name}::{test.name} ({marked}) judges with {others}"
        assert own in used, f"{path.name}::{test.name} does not call {marked}'s check"


@pytest.mark.parametrize("path", SUITE_FILES, ids=lambda p: p.name)
def test_the_suite_gives_verdicts_only_through_bound_checks(path: Path) -> None:
    """A tool that gives verdicts (a status check, the same-vectors comparison) is reached from
    the suite only through the family function that binds it to a requirement."""
    tree = ast.parse(path.read_text())
    imports = check_imports(tree)
    marked_families = {f"{CHECKS}.{marked.split('.')[0]}" for _, marked in marked_tests(tree)}
    for function in set(referenced_checks(tree, imports)):
        module = function.__module__
        if module.rpartition(".")[2] in TOOLS:
            unbound = gives_verdicts(function) and function not in ANY_REQUIREMENT
            assert not unbound, f"{path.name} judges with the tool {module}.{function.__name__}"
        elif judged(function) is None and gives_verdicts(function):  # a family's own helper
            assert module in marked_families, f"{path.name} uses {module}.{function.__name__}"


def requirement_ids(node: ast.AST) -> Iterator[ast.Constant]:
    ids = {r.id for r in CATALOGUE}
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and inner.value in ids:
            yield inner


@pytest.mark.parametrize("path", PACKAGE_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_ids_are_spelled_only_in_the_catalogue_and_the_markers(path: Path) -> None:
    """Elsewhere an id derives from the catalogue (``judged_by``, a requirement's fields), so
    that adding or renaming a requirement is one edit there and one marker."""
    tree = ast.parse(path.read_text())
    in_markers = {
        id(constant)
        for node in ast.walk(tree)
        if isinstance(node, ast.expr) and requirement_marked(node) is not None
        for constant in requirement_ids(node)
    }
    spelled = [c.value for c in requirement_ids(tree) if id(c) not in in_markers]
    assert spelled == [], f"{path.name} spells ids outside the catalogue and the markers"


# The suite, as collected: one id per test


def suite_tests() -> Iterator[tuple[str, list[Any]]]:
    """(name, marks) of every test and parametrized case of the packaged suite."""
    for path in SUITE_FILES:
        module = importlib.import_module(f"conformance.suite.{path.stem}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if not name.startswith("test_") or function.__module__ != module.__name__:
                continue
            marks = list(getattr(function, "pytestmark", []))
            cases = [
                param
                for mark in marks
                if mark.name == "parametrize"
                for param in mark.args[1]
                if hasattr(param, "marks")
            ]
            for case in cases or [None]:
                yield f"{path.stem}::{name}", marks + list(getattr(case, "marks", ()))


def test_every_suite_test_names_one_requirement() -> None:
    for name, marks in suite_tests():
        ids = requirements_of(marks)
        assert len(ids) == 1, f"{name}: {ids}"


def requirements_of(marks: list[Any]) -> list[str]:
    return [i for mark in marks if mark.name == "requirement" for i in mark.args]


def bad_requests_sent() -> Iterator[tuple[str, str]]:
    """(requirement, bad request id) of every case of the suite's error tests."""
    errors = importlib.import_module("conformance.suite.test_errors")
    for _, function in inspect.getmembers(errors, inspect.isfunction):
        marks = list(getattr(function, "pytestmark", []))
        for mark in marks:
            names = mark.args[0] if mark.name == "parametrize" else ""
            names = names.split(",") if isinstance(names, str) else list(names)
            sent = [name for name in names if name in ("bad_id", "bad_answer")]
            if not sent:
                continue
            at = names.index(sent[0])
            for param in mark.args[1]:
                values = param.values if hasattr(param, "values") else (param,)
                extra = list(getattr(param, "marks", ()))
                for requirement in requirements_of(marks + extra):
                    yield requirement, values[at]


def test_every_bad_request_that_names_a_requirement_is_judged_under_it() -> None:
    """fixtures/bad_requests.json names the SHOULD requirement of each should-reject request:
    a test marked with that id sends it."""
    named = {(bad.requirement, bad.id) for bad in load_bad_requests() if bad.requirement}
    assert named and named <= set(bad_requests_sent())
