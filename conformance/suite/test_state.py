"""State: no request changes the answers to the next ones (the state canary).

The canary (``conformance.run.canary``: one request of a few fixed corpus sentences) is asked by the
controller before any test, here right after each of the run's heaviest requests (at OpenAI's
documented limits: ``shape_fixtures.limit_requests``), and by the controller again at the run's
end, after every test of every worker; each answer must be its first."""

from __future__ import annotations

import pytest

from conformance.checks import state
from conformance.checks.state import FIRST, CanaryAnswer
from conformance.run.canary import CANARY_CASES, vectors_of
from conformance.run.expect import Expect
from conformance.run.session import ConformanceSession
from conformance.suite.shape_fixtures import LimitRequest


@pytest.mark.requirement("state.unchanged")
def test_the_canary_is_unchanged_right_after_the_heaviest_requests(
    expect: Expect,
    conformance_session: ConformanceSession,
    limit_requests: dict[str, LimitRequest],
) -> None:
    """The heaviest requests are sent once per test process, each followed at once by the
    canary, whatever ran before; their own answers are batch.documented-limits' to judge."""
    first = conformance_session.canary.first
    if first is None or first.vectors is None:
        why = "not asked at the run's start" if first is None else first.problem
        expect.unmeasurable(f"{FIRST} carried no vectors: {why}")
    sent = [r for r in limit_requests.values() if r.canary is not None]
    if not sent:  # batch.documented-limits fails that; the run's last canary still judges state
        pytest.skip("not applicable: no heaviest request was answered to ask the canary after")
    later = [
        CanaryAnswer(
            f"right after {r.name} (answered HTTP {r.exchange.status})", *vectors_of(r.canary)
        )
        for r in sent
        if r.exchange is not None and r.canary is not None
    ]
    result = state.unchanged(first.vectors, later, expect.vector_atol)
    changed = (
        r.canary
        for r, answer in zip(sent, later, strict=True)
        if not state.unchanged(first.vectors, [answer], expect.vector_atol).passed
    )
    expect(result, exchange=next(changed, None), cases=CANARY_CASES)
