"""What a published column was judged with, as digests the installed suite can recompute.

A verdict is only as current as the requirements, the inputs and the reference vectors that
produced it. The suite's version cannot tell two catalogues apart (0.1.0 judged both), so each
column records a digest of each (``judged_with``), and of the code that judges (the checks, the
suite's tests, the tolerances); ``matrix check`` recomputes them from the installed package and
calls a column stale when any differs, so that a change to the catalogue, the corpus, a golden,
a check or a tier cannot land with the matrix still showing verdicts of the old one.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.references import bundled_golden, golden_root
from conformance.reporting.document import catalogue_sha256

KEY = "judged_with"  # the manifest's per-column record; the page shows it
LABELS = {  # each recorded digest, by what a reader calls it
    "suite_version": "version",
    "catalogue_sha256": "catalogue",
    "corpus_sha256": "corpus",
    "golden_sha256": "golden",
    "checks_sha256": "checks",
}
# The code whose change can change a verdict, under the package: the check functions, the suite's
# tests and fixtures (what is sent, how it is judged), the reading of an answer (wire), the
# tolerances, and how checks' results become a requirement's verdict. The HTTP client is not: it
# carries requests and answers unread. The gate's own modules count only for a column judged
# with --baseline (a gateway against its upstream).
JUDGING_CODE = (
    "checks", "suite", "verdicts", "wire.py", "tolerances.py", "run/expect.py", "run/settings.py"
)  # fmt: skip
GATE_ONLY = ("checks/baseline.py", "suite/test_baseline.py", "verdicts/baseline_gate.py")


def fixtures_root() -> Path:
    """The packaged input corpus (``conformance.fixtures``), where the suite reads it."""
    return Path(str(resources.files("conformance.fixtures")))


def corpus_sha256() -> str:
    """Digest of every packaged fixture file (the reference corpus, the core cases, the bad
    requests, the triplets): a case added, changed or removed changes it. Each file counts as
    parsed JSON, so re-indenting one does not make every column stale."""
    files = sorted(fixtures_root().glob("*.json"))
    return _digest((path.name, _canonical(path)) for path in files)


def golden_sha256(models: Iterable[str]) -> str:
    """Digest of the bundled goldens of ``models`` (every recording of each: a column may be
    judged against any of them with ``--reference golden:MODEL/SOURCE``). Per model, so that
    re-recording another model's golden leaves a column current. A model with no bundled golden
    has the digest of no files: adding one makes its columns stale, since they were judged
    against nothing."""
    root = golden_root()
    folders = sorted({path.parent.name for m in models if (path := bundled_golden(m))})
    files = sorted(
        path
        for folder in folders
        for path in (root / folder).glob("*/*")
        if path.suffix in (".json", ".npy")  # what the wheel ships of a golden
    )
    return _digest((path.relative_to(root).as_posix(), _canonical(path)) for path in files)


def package_root() -> Path:
    return Path(str(resources.files("conformance")))


def checks_sha256(gate: bool = False) -> str:
    """Digest of the judging code (JUDGING_CODE; with ``gate``, the gate's modules too) as
    Python parses it: comments, docstrings and layout left out, so that rewording one makes no
    column stale; any change to what the code does, even one that turns out to change no
    verdict, does."""
    return _checks_sha256(package_root(), gate)


@functools.cache  # the installed code, once a process (matrix check asks for every column)
def _checks_sha256(root: Path, gate: bool) -> str:
    files = sorted(
        path
        for part in JUDGING_CODE
        for path in ([root / part] if part.endswith(".py") else (root / part).glob("*.py"))
        if gate or path.relative_to(root).as_posix() not in GATE_ONLY
    )
    return _digest((path.relative_to(root).as_posix(), _code(path)) for path in files)


def models_of(document: Mapping[str, Any]) -> list[str]:
    """The models whose goldens judged a results document: the served one (a bundled golden is
    its default reference) and the golden it names, if another was chosen."""
    models = [str(document["endpoint"]["model"])]
    reference = document.get("reference") or {}
    if reference.get("kind") == "golden" and reference.get("name"):
        models.append(str(reference["name"]))
    return models


def recorded(document: Mapping[str, Any]) -> dict[str, str]:
    """What a column was judged with, recorded as its suite run ends: the version and catalogue
    that run reports, the corpus, goldens and judging code of the same installed package."""
    return {
        **installed(document),
        "suite_version": str(document["suite"]["version"]),
        "catalogue_sha256": str(document["suite"]["catalogue_sha256"]),
    }


def installed(document: Mapping[str, Any]) -> dict[str, str]:
    """What the installed suite would judge the column of ``document`` with now."""
    return {
        "suite_version": __version__,
        "catalogue_sha256": catalogue_sha256(),
        "corpus_sha256": corpus_sha256(),
        "golden_sha256": golden_sha256(models_of(document)),
        "checks_sha256": checks_sha256(gate="baseline" in document),
    }


def differences(was: Mapping[str, Any], now: Mapping[str, str]) -> list[str]:
    """What differs between a column's record and the installed suite's, one phrase each
    ('catalogue c5b862e80e04 → 3a0d9e1f2b7c'); empty when the column is current."""
    return [
        f"{label} {str(was.get(key) or 'unrecorded')[:12]} → {now[key][:12]}"
        for key, label in LABELS.items()
        if was.get(key) != now[key]
    ]


def _canonical(path: Path) -> bytes:
    """A JSON file as sorted, compact text; any other file (a golden's vectors) as its bytes."""
    if path.suffix != ".json":
        return path.read_bytes()
    value = json.loads(path.read_text(encoding="utf-8"))
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _code(path: Path) -> bytes:
    """A module's syntax tree, docstrings left out, in a form that reads alike on every Python
    this package supports (fields a newer Python adds empty are left out, as unset ones are)."""
    return json.dumps(_tree(ast.parse(path.read_bytes())), separators=(",", ":")).encode()


def _tree(node: object) -> object:
    if isinstance(node, list):
        return [_tree(item) for item in node if not _is_docstring(item)]
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = ((name, value) for name, value in ast.iter_fields(node) if name != "ctx")
    return [
        type(node).__name__,
        {name: _tree(value) for name, value in fields if value not in (None, [])},
    ]


def _is_docstring(node: object) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _digest(files: Iterable[tuple[str, bytes]]) -> str:
    total = hashlib.sha256()
    for name, data in files:
        total.update(f"{name}\0{hashlib.sha256(data).hexdigest()}\n".encode())
    return total.hexdigest()
