"""The run's count of requests is every request the server received: the tests' (under xdist,
every worker's), retries included, and the controller's own (preflight, state canary, the
server's fingerprint for the report)."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from tests.support.suite_runner import run_suite

BEHAVIOUR = "always-429"  # texts answered well; token-id input gets 429 (Retry-After: 0)


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_every_request_the_server_received_is_counted(
    hostile_server: str, tmp_path: Path, workers: tuple[str, ...]
) -> None:
    record = f"{hostile_server}/{BEHAVIOUR}/debug/requests"
    requests.delete(record, timeout=5)
    run = run_suite(
        tmp_path,
        *("--endpoint", f"{hostile_server}/{BEHAVIOUR}", "--reference", "none"),
        *("--requirements", "input.", *workers),
    )
    assert run.results is not None, run.output
    received = [r for r in requests.get(record, timeout=5).json() if BEHAVIOUR in r["path"]]
    counted = run.results["run"]["requests"]
    assert counted["sent"] == len(received)
    assert counted["retries"] > 0  # the token-id requests met 429s
    assert counted["tokens"] > 0 and counted["untold"] == 0
    line = f"requests: {counted['sent']:,} sent ({counted['retries']:,} retries after 429/503)"
    assert line in run.output
