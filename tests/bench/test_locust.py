"""The bench on Locust: a headless master and two worker processes on 127.0.0.1 load the bundled
server, every answer judged. A correct server: exit 0, every row VALID. A per-token server and
a server whose concurrent answers cross: a non-zero exit, each failure named with its reason."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.matrix.processes import free_ports
from tests.bench.test_bench import validate_schema
from tests.conftest import FaultRoute

LOCUSTFILE = Path(__file__).parents[2] / "conformance" / "bench" / "locustfile.py"
REQUESTS = 80  # the cap, shared out between the two workers
# Enough for a wrong answer to show on a faulty server; fewer, because each wrong answer is large
# (the per-token fault's is 80 vectors an input) and the run is bounded by the cap.
FAULTY_REQUESTS = 24
pytestmark = pytest.mark.slow
# Locust runs in its own processes (importing it here would monkey-patch this one with gevent);
# the test extra installs it: missing, it is an error, not a skip.
assert importlib.util.find_spec("locust"), "pip install -e '.[test]' installs Locust"


@dataclass
class LocustRun:
    returncode: int
    output: str
    bench: dict[str, Any]

    def rows(self) -> dict[int, dict[str, Any]]:
        return {row["batch"]: row for row in self.bench["rows"]}


def locust_run(
    host: str, out: Path, late_worker: bool = False, requests: int = REQUESTS
) -> LocustRun:
    """``locust --master`` and two ``--worker`` processes, bounded by a cap of ``requests`` and
    60 s; with ``late_worker``, the second joins a running test, which then ends after 20 s."""
    (port,) = free_ports(1)
    common = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE)]
    bounds = (
        ("--run-time", "20s")
        if late_worker
        else ("--run-time", "60s", "--ec-requests", str(requests))
    )
    master_argv = [
        *common,
        *("--master", "--headless", "--expect-workers", "1" if late_worker else "2"),
        *("--master-bind-host", "127.0.0.1", "--master-bind-port", str(port)),
        *("--host", host, "-u", "4", "-r", "4", "--stop-timeout", "5", *bounds),
        *("--ec-batch", "1,8", "--ec-out", str(out)),
        *("--html", str(out / "locust.html"), "--csv", str(out / "locust")),
    ]
    worker_argv = [*common, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port)]
    processes: list[subprocess.Popen[str]] = []
    try:
        master = spawn(master_argv, out / "master.log")
        processes.append(master)
        processes.append(spawn(worker_argv, out / "worker-1.log"))
        if late_worker:  # once the test runs on the first
            wait_for_line(out / "master.log", SPAWNED, timeout=120)
        processes.append(spawn(worker_argv, out / "worker-2.log"))
        code = master.wait(timeout=180)
        deadline = time.monotonic() + 30  # a worker ends with its master
        stuck = [w for w in processes[1:] if not ended(w, deadline - time.monotonic())]
    finally:
        for process in processes:  # never leave one running, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    output = "\n".join(path.read_text() for path in sorted(out.glob("*.log")))
    assert not stuck, f"{len(stuck)} worker(s) outlived their master:\n{output}"
    bench = out / "bench.json"
    assert bench.exists(), output
    return LocustRun(code, output, json.loads(bench.read_text()))


# What the master logs once its users are spawned: the second when the worker's report of them
# came later than Locust waits for (a busy machine: seen in CI, the users running all the same)
SPAWNED = ("All users spawned", "Spawning is complete and report waittime is expired")


def wait_for_line(log: Path, texts: tuple[str, ...], timeout: float) -> None:
    """Until ``log`` holds one of ``texts``."""
    deadline = time.monotonic() + timeout
    while not any(text in log.read_text() for text in texts):
        assert time.monotonic() < deadline, f"none of {texts} in {log}:\n{log.read_text()}"
        time.sleep(0.2)


def ended(process: subprocess.Popen[str], timeout: float) -> bool:
    try:
        process.wait(timeout=max(0.0, timeout))
    except subprocess.TimeoutExpired:
        return False
    return True


def spawn(argv: list[str], log: Path) -> subprocess.Popen[str]:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )


def test_every_answer_of_a_correct_server_is_valid(fault_route: FaultRoute, tmp_path: Path) -> None:
    run = locust_run(fault_route(), tmp_path)
    assert run.returncode == 0, run.output
    rows = run.rows()
    assert set(rows) == {1, 8}
    assert all(row["status"] == "VALID" and row["invalid"] == 0 for row in rows.values()), rows
    assert REQUESTS <= sum(row["requests"] for row in rows.values()) <= REQUESTS + 8, rows
    assert all(row["p50_ms"] > 0 and row["inputs_per_s"] > 0 for row in rows.values()), rows
    assert run.bench["load_generator"]["workers"] == 2
    validate_schema(run.bench)  # the local bench's format: the two runs compare directly
    for kept in ("locust.html", "locust_stats.csv", "latency.png", "throughput.svg"):
        assert (tmp_path / kept).exists(), kept


def test_a_worker_that_joins_a_running_test_gets_the_reference(
    fault_route: FaultRoute, tmp_path: Path
) -> None:
    run = locust_run(fault_route(), tmp_path, late_worker=True)
    assert run.returncode == 0, run.output
    assert run.bench["load_generator"]["workers"] == 2  # the late one asked, and was answered
    assert all(row["status"] == "VALID" for row in run.rows().values()), run.rows()
    assert "Traceback" not in (tmp_path / "worker-2.log").read_text(), run.output


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        # 80 tokens x 384: the per-token matrix flattened, as the bench's validator sees it
        ("per-token", r"INVALID: dimension 30720, the reference's is 384"),
        # another request's answer: another batch size, or the same size with other inputs
        ("cross-talk", r"INVALID: (\d+ vectors for \d+ inputs|1 - cosine to the reference = )"),
    ],
)
def test_wrong_answers_under_load_fail_the_run_with_their_reason(
    fault_route: FaultRoute, tmp_path: Path, fault: str, reason: str
) -> None:
    run = locust_run(fault_route(fault), tmp_path, requests=FAULTY_REQUESTS)
    assert run.returncode != 0, run.output
    invalid = [row for row in run.rows().values() if row["status"] == "INVALID"]
    assert invalid, run.rows()
    for row in invalid:
        assert row["p50_ms"] is None and row["inputs_per_s"] is None  # no latency of a wrong one
        assert re.match(reason, row["problem"]), row["problem"]
    assert re.search(r"POST batch \d+: [\"']" + reason, run.output)  # Locust's error report


def test_the_cli_prints_the_locust_file_and_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    assert main(["bench", "locustfile"]) == 0
    assert Path(capsys.readouterr().out.strip()) == LOCUSTFILE
    with pytest.raises(SystemExit) as shown:
        main(["bench", "locustfile", "--help"])  # Locust's own --help omits a file's options
    assert shown.value.code == 0
    listed = capsys.readouterr().out
    for option in ("batch", "tokens", "encoding", "model", "reference", "api-key", "requests"):
        assert f"--ec-{option}" in listed
    with pytest.raises(SystemExit):
        main(["bench", "locustfile", "--ec-batch", "0"])
    assert "expected comma-separated positive numbers" in capsys.readouterr().err


def test_a_run_with_nothing_to_judge_by_does_not_start(tmp_path: Path) -> None:
    """Another model and no --ec-reference: the run ends before any load (fail closed)."""
    argv = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless"]
    argv += ["--host", "http://127.0.0.1:9", "-u", "1", "--run-time", "30s"]
    argv += ["--ec-model", "some-other-model", "--ec-out", str(tmp_path)]
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert completed.returncode != 0
    assert "no reference for model 'some-other-model'" in completed.stderr + completed.stdout
    assert not (tmp_path / "bench.json").exists()
