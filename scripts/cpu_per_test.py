"""CPU-seconds per test, for whoever trims CI: a pytest plugin that reads the machine's busy time
(/proc/stat) around each test's setup, call and teardown, so the servers, suite runs and tools a
test starts count for it. Serial runs only (under xdist the tests' times mix); a quiet machine.

    PYTHONPATH=scripts CPU_PER_TEST=cpu.jsonl python -m pytest -n 0 -p cpu_per_test
    python scripts/cpu_per_test.py cpu.jsonl      # the costliest tests and files
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from collections.abc import Generator
from pathlib import Path

import pytest

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def busy_seconds() -> float:
    """The machine's CPU time since boot, all cores, idle and iowait left out."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / CLOCK_TICKS


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    cpu, wall = busy_seconds(), time.monotonic()
    yield
    row = {"id": item.nodeid, "cpu": busy_seconds() - cpu, "wall": time.monotonic() - wall}
    with open(os.environ["CPU_PER_TEST"], "a") as out:
        out.write(json.dumps(row) + "\n")


def summary(rows: list[dict[str, float | str]], top: int = 25) -> str:
    by_file: Counter[str] = Counter()
    for row in rows:
        by_file[str(row["id"]).split("::")[0]] += float(row["cpu"])
    costliest = sorted(rows, key=lambda row: -float(row["cpu"]))[:top]
    lines = [f"{sum(by_file.values()):.0f} CPU-s over {len(rows)} tests", "", "by file:"]
    lines += [f"{cpu:8.1f}  {name}" for name, cpu in by_file.most_common(top)]
    lines += ["", "by test:"]
    lines += [f"{float(row['cpu']):8.1f}  {row['id']}" for row in costliest]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary([json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines()]))
