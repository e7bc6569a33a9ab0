"""The ``embedding-conformance`` console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance import __version__
from conformance.cli import main
from conformance.requirements import CATALOGUE


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"embedding-conformance {__version__}"


def test_help_names_the_way_to_run_the_suite(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "pytest --endpoint URL" in out and "requirements" in out and "run" in out


def test_requirements_lists_the_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["requirements"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [r.id for r in CATALOGUE]


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "embedding-conformance"
    completed = subprocess.run([str(script), "--help"], capture_output=True, text=True)
    assert completed.returncode == 0
    assert "usage: embedding-conformance" in completed.stdout


def test_run_is_pytest_with_an_endpoint(clean_server: str, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "embedding-conformance"
    completed = subprocess.run(
        # pytest's own options pass through (a few requirements: the pass-through is tested)
        [str(script), "run", clean_server, "--requirements", "envelope.", "-q"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "conformance: 7 passed, 0 failed" in completed.stdout, completed.stdout
