"""A gateway judged by what it changes (issue 58, item 5): a column whose suite runs the gate's
requirements alone against a baseline recorded from the server the gateway fronts. The build
asks no certificate of it (--certify refuses a part of the suite), its page says what it was
judged by, and the gate's own code counts in its staleness (and in no other column's)."""

from __future__ import annotations

import pytest

from conformance.matrix import judged, peers, publish
from tests.matrix.test_unreferenced import peer

GATE = ("--baseline", "{work}/baseline", "--requirements", "baseline.")


@pytest.mark.parametrize(
    ("suite_args", "gate_only"),
    [
        (GATE, True),
        (("--requirements", "baseline.", "--baseline", "{work}/b"), True),
        (("--baseline", "{work}/baseline"), False),  # the whole suite, and the gate: certifiable
        (("--requirements", "baseline."), False),  # no baseline: the gate does not run
        ((), False),
    ],
)
def test_gate_only_is_read_from_the_suite_args(
    suite_args: tuple[str, ...], gate_only: bool
) -> None:
    assert peer(*suite_args).gate_only is gate_only
    assert peer(*suite_args).certifiable is not gate_only


def test_the_shipped_gateway_column_fronts_the_vllm_it_is_judged_against() -> None:
    gateway = peers.load().peer("litellm-gateway")
    assert gateway.gate_only and not gateway.certifiable
    vllm, record, proxy = gateway.processes
    assert "vllm.entrypoints.openai.api_server" in vllm.argv and "{port}" in vllm.argv
    assert record.setup and "--from-endpoint" in record.argv
    assert "http://127.0.0.1:{port}" in record.argv  # recorded from vLLM, not the proxy
    assert gateway.endpoint == "http://127.0.0.1:{port2}" and "{port2}" in proxy.argv


def test_its_page_says_it_was_judged_by_the_gate_alone() -> None:
    document = {"verdict": "FAIL", "baseline": {"path": "<cache>/b", "regressions": []}}
    verdict = publish._verdict({"state": "ran"}, document)
    assert verdict.startswith("NOT CERTIFIED: THE GATE ONLY") and verdict.endswith("gate: FAIL")
    certified = {**document, "certification": {"certified": True}}  # --baseline, whole suite
    assert publish._verdict({"state": "ran"}, certified) == "CERTIFIED"


def test_the_gates_code_counts_only_for_a_column_judged_with_a_baseline() -> None:
    document = {
        "suite": {"version": "0.1.0", "catalogue_sha256": "ab"},
        "endpoint": {"model": "all-MiniLM-L6-v2"},
    }
    plain = judged.recorded(document)["checks_sha256"]
    gateway = judged.recorded({**document, "baseline": {"path": "b"}})["checks_sha256"]
    assert plain == judged.checks_sha256() and gateway == judged.checks_sha256(gate=True)
    assert plain != gateway
