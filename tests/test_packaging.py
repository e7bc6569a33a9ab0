"""The wheel and sdist carry every package and data file, and the installed wheel runs the suite.

The corpora (``fixtures/``) and goldens (``golden/``) live at the top of the repository and become
``conformance.fixtures`` / ``conformance.golden`` only through pyproject.toml (an explicit package
list, package-dir, package-data globs). An editable install reads the working tree, so it keeps
working when a package is missing from that list or a data file from those globs: only the built
distributions show it. These tests build them and look inside, then install the wheel in a bare
virtualenv and run the suite from an empty directory, as a user would.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIRS = ("fixtures", "golden")  # installed as conformance.fixtures, conformance.golden
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", ".tox", "build", "dist", "*.egg-info", "__pycache__", ".*_cache"
)
BUNDLED_REFERENCE = "reference: bundled golden all-MiniLM-L6-v2/sentence-transformers"
NOT_FAILURES = "deselected|skipped|xfailed|warnings?"  # what pytest's last line may add


@dataclass(frozen=True)
class Distributions:
    wheel: frozenset[str]  # member names
    sdist: frozenset[str]  # member names below the top directory (embedding_conformance-X.Y.Z/)
    wheel_path: Path


def run(command: list[str | Path], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """A subprocess isolated from this run: no PYTHONPATH or outer virtualenv to import the
    repository from, no pytest, suite or OpenAI settings leaking in. PIP_* stays: it says
    where the package index is."""
    leaking = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in leaking and not k.startswith(("PYTEST_", "EMBEDDINGS_", "OPENAI_"))
    }
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def output_of(completed: subprocess.CompletedProcess[str]) -> str:
    return completed.stdout + completed.stderr


def build(source: Path, out: Path) -> None:
    """sdist, then the wheel from the unpacked sdist (``python -m build``'s default), so the wheel
    also proves the sdist is complete. No isolation: the test extra has setuptools and build."""
    command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source]
    completed = run(command, cwd=source, timeout=300)
    assert completed.returncode == 0, output_of(completed)


def sdist_members(path: Path) -> frozenset[str]:
    with tarfile.open(path) as sdist:
        names = [m.name for m in sdist.getmembers() if m.isfile()]
    top = {name.split("/", 1)[0] for name in names}
    assert len(top) == 1 and top.pop().startswith("embedding_conformance-"), names
    return frozenset(name.split("/", 1)[1] for name in names)


@pytest.fixture(scope="module")
def distributions(tmp_path_factory: pytest.TempPathFactory) -> Distributions:
    """Built once for the module, from a copy of the working tree: sdist builds write into the
    source directory, which must not collide with other runs or leave anything in the checkout."""
    root = tmp_path_factory.mktemp("packaging")
    source, out = root / "source", root / "dist"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    build(source, out)
    (wheel,), (sdist,) = out.glob("*.whl"), out.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        wheel_members = frozenset(archive.namelist())
    return Distributions(wheel_members, sdist_members(sdist), wheel)


def data_files() -> list[str]:
    """What the data packages hold in the checkout: *.json, *.npy and their __init__.py."""
    found = (
        p
        for directory in DATA_DIRS
        for p in (REPO / directory).rglob("*")
        if p.is_file() and (p.suffix in (".json", ".npy") or p.name == "__init__.py")
    )
    return sorted(p.relative_to(REPO).as_posix() for p in found)


def package_data_files() -> list[str]:
    """The data inside conformance/ itself (py.typed, schemas, stylesheets, the peers file):
    every file there but Python source, as the package-data globs must carry it."""
    found = (
        p
        for p in (REPO / "conformance").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    )
    return sorted(p.relative_to(REPO).as_posix() for p in found)


def source_packages() -> list[str]:
    """Every directory under conformance/ with an __init__.py, as a dotted name."""
    inits = (REPO / "conformance").rglob("__init__.py")
    return sorted(".".join(p.parent.relative_to(REPO).parts) for p in inits)


def test_data_files_are_found() -> None:
    """Guards the two tests below against passing on an empty list."""
    files = data_files()
    assert {"fixtures/__init__.py", "fixtures/core.json", "golden/__init__.py"} <= set(files)
    assert "golden/all-MiniLM-L6-v2/sentence-transformers/vectors.npy" in files
    assert {"conformance/py.typed", "conformance/reporting/report.css"} <= set(package_data_files())


def test_wheel_carries_every_data_file_and_py_typed(distributions: Distributions) -> None:
    """The wheel is what users install: a file missing here is missing from every install."""
    expected = {f"conformance/{name}" for name in data_files()} | set(package_data_files())
    assert sorted(expected - distributions.wheel) == []


def test_sdist_carries_every_data_file(distributions: Distributions) -> None:
    """Distributions rebuild wheels from the sdist: it must hold the top-level data directories
    and the package's own data."""
    expected = set(data_files()) | set(package_data_files())
    assert sorted(expected - distributions.sdist) == []


def test_wheel_has_every_package_of_the_source_tree(distributions: Distributions) -> None:
    """The package list in pyproject.toml is explicit (the data packages need package-dir), so a
    new subpackage must be added there by hand; an editable install would not notice."""
    in_wheel = {
        name.removesuffix("/__init__.py").replace("/", ".")
        for name in distributions.wheel
        if name.endswith("/__init__.py")
    }
    missing = sorted(set(source_packages()) - in_wheel)
    assert missing == [], f"add {missing} to [tool.setuptools] packages in pyproject.toml"


@pytest.fixture
def bare_venv(tmp_path: Path) -> Iterator[Path]:
    """A new virtualenv without system site packages; removed afterwards (~170 MB installed)."""
    venv = tmp_path / "venv"
    completed = run([sys.executable, "-m", "venv", venv], cwd=tmp_path, timeout=120)
    assert completed.returncode == 0, output_of(completed)
    yield venv
    shutil.rmtree(venv, ignore_errors=True)


def install(venv: Path, wheel: Path) -> Path:
    """``pip install WHEEL``: the core dependencies come from the package index (or pip's cache);
    returns the venv's python."""
    python = venv / "bin" / "python"
    completed = run([python, "-m", "pip", "install", "--quiet", wheel], cwd=venv, timeout=600)
    assert completed.returncode == 0, output_of(completed)
    return python


@pytest.mark.slow
def test_installed_wheel_passes_the_suite_against_the_reference_server(
    distributions: Distributions, clean_server: str, bare_venv: Path, tmp_path: Path
) -> None:
    """The whole path a user takes: the wheel alone (no repository on the path, no torch: the
    suite must not need the server extra) collects every test, finds its corpora and the
    bundled golden and passes against the reference server. The requirements run are those that
    read a packaged file (the reference corpus and golden, the triplets, the bad requests, the
    core inputs); the whole catalogue passing is the working tree's test, the same code."""
    python = install(bare_venv, distributions.wheel_path)
    no_torch = run([python, "-c", "import torch"], cwd=tmp_path, timeout=60)
    assert "No module named 'torch'" in no_torch.stderr, output_of(no_torch)

    empty = tmp_path / "empty"
    empty.mkdir()
    command = [python, "-m", "pytest", "--endpoint", clean_server, "-p", "no:cacheprovider"]
    command += ["--requirements", "reference.,semantics.,errors.rejected,envelope.,usage."]
    completed = run(command, cwd=empty, timeout=600)
    output = output_of(completed)
    assert completed.returncode == 0, output
    assert BUNDLED_REFERENCE in output
    assert re.search(r"^conformance: [1-9]\d* passed, 0 failed,", output, re.MULTILINE), output
    final = completed.stdout.strip().splitlines()[-1]
    assert re.fullmatch(rf"=+ [1-9]\d* passed(, \d+ ({NOT_FAILURES}))* in .+ =+", final), final
