"""``--endpoint builtin[:transport]`` starts the bundled server for the run and leaves nothing."""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.suite_runner import run_suite


def orphaned_servers() -> set[str]:
    """Server processes whose parent has gone (re-parented to init): what a run that did not
    stop its server leaves. Servers of tests running alongside (xdist) still have a parent."""
    found = subprocess.run(
        ["pgrep", "--parent", "1", "-f", "conformance.server"], capture_output=True, text=True
    )
    return set(found.stdout.split())


def our_segments() -> set[str]:
    return {p.name for p in Path("/dev/shm").iterdir() if p.name.startswith(("ecf_", "ecfprobe_"))}


def mapped_segments() -> set[str]:
    """Segments some live process has mapped: a running server's probe, a worker's answer."""
    mapped = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        with contextlib.suppress(OSError):
            for line in maps.read_text().splitlines():
                if "/dev/shm/ecf" in line:
                    mapped.add(line.rsplit("/", 1)[-1].removesuffix(" (deleted)"))
    return mapped


def lasting_segments(before: set[str]) -> set[str]:
    """New segments still there a moment later that no live process maps: what a stopped
    server left. (Servers of tests running alongside, under xdist, map their probe for their
    whole life; their answers come and go in milliseconds.)"""
    new = our_segments() - before
    time.sleep(1)
    return (new & our_segments()) - mapped_segments()


@pytest.mark.parametrize("endpoint", ["builtin:shm", "builtin:base64"])
def test_builtin_server_runs_the_suite_and_goes_away(tmp_path: Path, endpoint: str) -> None:
    before_processes, before_segments = orphaned_servers(), our_segments()
    # a few requirements: every answer comes through the transport, and the lifecycle is tested
    run = run_suite(tmp_path, "--endpoint", endpoint, "--requirements", "envelope.")
    assert run.returncode == 0, run.output
    assert "embedding-conformance 0.1.0: http://127.0.0.1:" in run.output  # the real URL
    assert orphaned_servers() <= before_processes
    assert lasting_segments(before_segments) == set()


def test_unknown_builtin_variant_is_a_usage_error(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", "builtin:carrier-pigeon")
    assert run.returncode == 4
    assert "use builtin, builtin:base64 or builtin:shm" in run.output


def test_builtin_serves_the_model_the_run_names(tmp_path: Path) -> None:
    """--model names what the built-in server serves (here a variant, built on first use), so
    the preflight finds it and the variant's golden judges it."""
    run = run_suite(
        tmp_path,
        "--endpoint",
        "builtin",
        "--model",
        "minilm-matryoshka",
        "--requirements",
        "envelope.",
    )
    assert run.returncode == 0, run.output
    assert "reference: bundled golden minilm-matryoshka/" in run.output


def test_a_model_the_builtin_server_cannot_serve_is_the_runs_one_usage_error(
    tmp_path: Path,
) -> None:
    """Not fetched yet: exit 4 at once, with the server's reason and the command that fetches
    it; no test runs."""
    empty_cache = {"EMBEDDING_CONFORMANCE_CACHE": str(tmp_path / "empty-cache")}
    run = run_suite(
        tmp_path, "--endpoint", "builtin", "--model", "all-mpnet-base-v2", env=empty_cache
    )
    assert run.returncode == 4, run.output
    assert (
        "ERROR: the built-in server did not start: model 'all-mpnet-base-v2' is not fetched"
        in run.output
    )
    assert "'embedding-conformance models fetch all-mpnet-base-v2'" in run.output
    assert "passed" not in run.output and "Traceback" not in run.output
