"""State: no request changes the answers to the next ones (the state canary).

The canary (``conformance.canary``: one request of a few fixed corpus sentences) is asked by the
controller before any test, here right after the run's largest request, and by the controller
again at the run's end, after every test of every worker; each answer must be its first."""

from __future__ import annotations

import pytest

from conformance.canary import CANARY_CASES, canary_params, canary_texts, vectors_of
from conformance.checks import state
from conformance.checks.state import FIRST, CanaryAnswer
from conformance.expect import Expect
from conformance.references import Recording
from conformance.session import ConformanceSession
from conformance.suite.pytest_fixtures import Answers
from conformance.suite.reference_corpus import large_batch_cases


@pytest.mark.requirement("state.unchanged")
def test_the_canary_is_unchanged_right_after_the_largest_request(
    expect: Expect,
    conformance_session: ConformanceSession,
    answers: Answers,
    reference: Recording | None,
    context: int | None,
) -> None:
    """The largest request is sent again here, so the canary comes right after it (in this
    process) whatever ran before; its own answer is batch.large's to judge."""
    first = conformance_session.canary.first
    if first is None or first.vectors is None:
        why = "not asked at the run's start" if first is None else first.problem
        expect.unmeasurable(f"{FIRST} carried no vectors: {why}")
    cases = large_batch_cases(reference, context)
    largest = answers.fresh([c.text for c in cases], encoding_format="float")
    after = (
        f"right after the largest request ({len(cases)} inputs in one request, "
        f"answered HTTP {largest.status})"
    )
    again = answers.fresh(canary_texts(), **canary_params())
    vectors, problem = vectors_of(again)
    later = [CanaryAnswer(after, vectors, problem)]
    result = state.unchanged(first.vectors, later, expect.vector_atol)
    expect(result, exchange=again, cases=CANARY_CASES)
