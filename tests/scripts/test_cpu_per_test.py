"""scripts/cpu_per_test.py: a test that burns CPU in a child process is charged for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BURNING = """
import subprocess, sys

def test_idle():
    pass

def test_burns_a_second_in_a_child():
    code = "import time\\nend = time.process_time() + 1\\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", code], check=True)
"""


def test_the_cpu_of_a_tests_children_is_the_tests(tmp_path: Path) -> None:
    (tmp_path / "test_burning.py").write_text(BURNING)
    out = tmp_path / "cpu.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "scripts"), "CPU_PER_TEST": str(out)}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "cpu_per_test", "-p", "no:cacheprovider"]
    argv += ["-p", "no:xdist", "-o", "addopts=", "test_burning.py"]
    subprocess.run(argv, cwd=tmp_path, env=env, check=True, capture_output=True, timeout=120)
    rows = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert rows["test_burning.py::test_burns_a_second_in_a_child"]["cpu"] >= 0.9
    assert rows["test_burning.py::test_idle"]["cpu"] < 0.5  # other processes may run meanwhile
    summary = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cpu_per_test.py"), str(out)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert summary.splitlines()[0].endswith("CPU-s over 2 tests")
    assert "test_burning.py::test_burns_a_second_in_a_child" in summary.split("by test:")[1]
