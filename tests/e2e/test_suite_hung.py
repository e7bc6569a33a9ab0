"""A hung server costs a run a few timeouts, not one per test: after one input wedges the
reference server's only worker (fault wedged-worker), the suite names the hang and fails the
rest at once, and ends within three times --request-timeout of a correct server's run."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from conformance.client.http import PROBE_TIMEOUT
from tests.conftest import reference_server
from tests.support.suite_runner import SuiteRun, run_suite

# Not less: on two cores shared with other servers a correct server's answer took 6 s.
TIMEOUT = 10.0
# Every module but the two heaviest on a correct server (reference.*, batch.*: a fifth and a
# third of its run), which fail at once on a hung one like the others: the yardstick stays short.
SPREAD = "envelope.,input.,dimension.,finite.,normalization.,base64.,dimensions.,errors.,fuzz.,"
SPREAD += "determinism.,concurrency.,state.,usage.,semantics."
ARGS = ("--request-timeout", f"{TIMEOUT:g}", "--fuzz-examples", "30", "--durations", "0")
ARGS += ("--requirements", SPREAD)
SLOW_PHASE = 0.9 * min(PROBE_TIMEOUT, TIMEOUT)  # a test phase that waited for a probe or more
HUNG_TEST = "test_answer[finite.values:long-single-token]"  # the input the worker hangs on


def timed_run(workdir: Path, base_url: str) -> tuple[SuiteRun, float]:
    workdir.mkdir()
    started = time.monotonic()
    run = run_suite(workdir, "--endpoint", base_url, *ARGS)
    return run, time.monotonic() - started


def slow_phases(output: str) -> list[str]:
    """The test phases pytest's --durations lists at SLOW_PHASE seconds or more."""
    phases = re.findall(r"^(\d+\.\d+)s (?:setup|call|teardown) +(\S+)$", output, re.MULTILINE)
    return [test for seconds, test in phases if float(seconds) >= SLOW_PHASE]


@pytest.mark.slow
def test_a_hung_server_costs_a_few_timeouts_and_is_named(tmp_path: Path, clean_server: str) -> None:
    clean, clean_seconds = timed_run(tmp_path / "clean", clean_server)
    assert clean.returncode == 0, clean.output
    with reference_server("--fault", "wedged-worker") as base_url:
        hung, hung_seconds = timed_run(tmp_path / "hung", base_url)
    slow = slow_phases(hung.output)
    print(f"clean run {clean_seconds:.1f} s, hung run {hung_seconds:.1f} s; slow: {slow}")
    assert hung.returncode == 1, hung.output
    assert hung.status("finite.values") == "FAIL"
    hang = f"POST {base_url}/v1/embeddings got no answer within {TIMEOUT:g} s (--request-timeout)"
    assert f"the server stopped answering: {hang}" in hung.output
    assert "Traceback" not in hung.output and "INTERNALERROR" not in hung.output
    # Slow: the hung request, the first probe, at most one more (a timeout after the first),
    # and the fuzz test's own work on a busy machine; every other failure came at once.
    assert any(test.endswith(HUNG_TEST) for test in slow) and len(slow) <= 4, slow
    assert hung_seconds <= clean_seconds + 3 * TIMEOUT
