"""A run ended by SIGTERM (a cancelled CI job, the matrix build stopping a peer's suite) ends as
Ctrl-C ends it: the session finishes, the server the run started stops, and its runtime files go
(Hypothesis's home, the worker's socket). Python's default would end it on the spot."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.runtime_dir import NAME
from tests.run.test_builtin import orphaned_servers


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A private runtime folder short enough for the worker's socket path (107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="ecf-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_run_ended_by_sigterm_leaves_nothing(tmp_path: Path, runtime: Path) -> None:
    private = runtime / NAME
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    before = orphaned_servers()
    with (tmp_path / "output").open("w+") as output:
        run = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--endpoint", "builtin"],
            cwd=tmp_path,
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**environment, "XDG_RUNTIME_DIR": str(runtime)},
        )
        try:
            deadline = time.monotonic() + 120
            while "collected" not in (tmp_path / "output").read_text():  # tests under way
                running = run.poll() is None and time.monotonic() < deadline
                assert running, (tmp_path / "output").read_text()
                time.sleep(0.2)
            assert any(private.glob("hypothesis-*"))  # the run's own, to be removed
            run.send_signal(signal.SIGTERM)
            returncode = run.wait(timeout=60)
        finally:
            run.kill()
        text = (tmp_path / "output").read_text()
    assert returncode == 2, text  # pytest's "interrupted"
    assert "KeyboardInterrupt" in text or "ended by signal SIGTERM" in text, text
    assert sorted(p.name for p in private.iterdir()) in ([], ["bodies"]), text
    assert orphaned_servers() <= before
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # this process's: untouched
