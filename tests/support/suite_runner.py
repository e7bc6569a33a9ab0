"""Run the packaged suite as a user would: ``pytest --endpoint ...`` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class SuiteRun:
    returncode: int
    output: str
    results: dict[str, Any] | None

    def status(self, requirement_id: str) -> str:
        assert self.results is not None, self.output
        found = (r["status"] for r in self.results["requirements"] if r["id"] == requirement_id)
        return next(found, "NOT RUN")  # requirements not in play are not in the results

    def with_status(self, status: str) -> set[str]:
        assert self.results is not None, self.output
        return {r["id"] for r in self.results["requirements"] if r["status"] == status}


def run_suite(workdir: Path, *args: str, env: dict[str, str] | None = None) -> SuiteRun:
    """Run ``pytest --endpoint ...`` as a user would: a subprocess in an empty directory."""
    results_path = workdir / "results.json"
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("EMBEDDINGS_", "OPENAI_", "PYTEST_"))
    }
    environment.update(env or {})
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--results-json",
            str(results_path),
            # pytest's temp folders (xdist makes one per run) go with the test's own
            "--basetemp",
            str(workdir / "pytest-tmp"),
            *args,
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    results = json.loads(results_path.read_text()) if results_path.exists() else None
    # A run leaves nothing in the folder it ran in: Hypothesis's caches go to a home of the run's.
    assert not (workdir / ".hypothesis").exists(), "the run left ./.hypothesis behind"
    return SuiteRun(completed.returncode, completed.stdout + completed.stderr, results)
