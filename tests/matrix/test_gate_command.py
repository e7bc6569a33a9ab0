"""`matrix gate OLD NEW` on two peers of a peers file: the same server passes the gate, a
server whose vectors drifted fails it, on baseline.vectors, with the regression named. Both
peers are routes of the session's shared fault-routes server, each peer's process a setup
step that ends at once: starting and stopping peers is tests/matrix/test_build.py's part."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main
from conformance.matrix import scrub
from conformance.references import reference_cases
from tests.conftest import FaultRoute

PEERS = """
[[peer]]
name = "{name}"
title = "reference server"
package = "embedding-conformance"
homepage = "https://example.org"
environment = "project"
endpoint = "{endpoint}"
model = "all-MiniLM-L6-v2"
# the gate's requirements and the one fp16 vectors fail: the orchestration is what is tested here
suite_args = ["--requirements", "baseline.,reference.agreement"]

[[peer.process]]
argv = ["{{python}}", "-c", "pass"]
setup = true
"""


@pytest.fixture(scope="module")
def peers_file(tmp_path_factory: pytest.TempPathFactory, fault_route: FaultRoute) -> Path:
    path = tmp_path_factory.mktemp("peers") / "peers.toml"
    drifted = fault_route("fp16-vectors")
    path.write_text(
        PEERS.format(name="old", endpoint=fault_route())
        + PEERS.format(name="drifted", endpoint=drifted)
    )
    return path


def gate(tmp_path: Path, peers_file: Path, new: str) -> tuple[int, str]:
    out = tmp_path / "gate"
    args = ["matrix", "gate", "old", new, "--peers", str(peers_file)]
    code = main([*args, "--cache", str(tmp_path / "cache"), "--out", str(out)])
    # published as the matrix's columns are: no path of the machine that ran it
    assert scrub.machine_paths_in([out / "before.json", out / "after.json"]) == {}
    return code, (out / "gate.md").read_text()


def test_the_same_server_passes_the_gate(tmp_path: Path, peers_file: Path) -> None:
    code, page = gate(tmp_path, peers_file, "old")
    assert code == 0
    assert "Verdict: **PASSED**" in page
    cases = len(reference_cases())
    assert (
        f"- `baseline.vectors` PASS: 0 of {cases} inputs accepted or rejected differently" in page
    )


def test_drifted_vectors_fail_the_gate(tmp_path: Path, peers_file: Path) -> None:
    code, page = gate(tmp_path, peers_file, "drifted")
    assert code == 1
    assert "Verdict: **FAILED**" in page
    assert "- `baseline.vectors` FAIL" in page
    assert "- REGRESSION reference.agreement: PASS before, FAIL now" in page
