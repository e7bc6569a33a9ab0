"""The upgrade gate (``--baseline``): this server against a recording of the server before the
change. Only in play when a baseline is given; new FAILs against the baseline run's own results
are reported by the plugin at the end of the run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from conformance.checks import baseline as baseline_checks
from conformance.checks.agreement import Comparison
from conformance.checks.result import Verdicts
from conformance.corpus import load_bad_requests
from conformance.references import Recording
from conformance.references.baseline import Baseline
from conformance.references.shape import PROBE, error_answer, shape_of
from conformance.run.expect import Expect
from conformance.run.session import ConformanceSession
from conformance.run.settings import Settings
from conformance.suite.pytest_fixtures import Answers, BadAnswers
from conformance.suite.reference_corpus import CASES, OVER_CONTEXT, embed_cases, expect_agreement
from conformance.tolerances import Tolerances

RECORD_HINT = "record one with: embedding-conformance golden record --from-endpoint OLD_URL"


@pytest.fixture(scope="session")
def baseline(conformance_session: ConformanceSession) -> Baseline:
    assert conformance_session.baseline is not None  # these tests are deselected without one
    return conformance_session.baseline


@pytest.fixture
def baseline_recording(baseline: Baseline) -> Recording:
    if baseline.recording is None:
        pytest.skip(f"the baseline is a results.json alone, with no vectors; {RECORD_HINT}")
    return baseline.recording


@pytest.fixture
def baseline_behaviour(baseline: Baseline) -> dict[str, Any]:
    if baseline.behaviour is None:
        pytest.skip(f"the baseline was not recorded from an endpoint; {RECORD_HINT}")
    return baseline.behaviour


@pytest.mark.requirement("baseline.vectors")
def test_vectors_as_before(
    expect: Expect, settings: Settings, answers: Answers, baseline_recording: Recording
) -> None:
    over = {i: answers.get(CASES[i].text, encoding_format="float") for i in OVER_CONTEXT}
    rejected_now = {i for i, exchange in over.items() if 400 <= exchange.status < 500}
    accepted_before = set(baseline_recording.rows)
    acceptance = (accepted_before, set(baseline_recording.rejected), rejected_now)
    within = [c for c in CASES.values() if c.id in accepted_before and c.id not in over]
    actual, carriers = embed_cases(expect, answers, within)
    ids = [c.id for c in within]
    for case_id in OVER_CONTEXT:  # past the context: compared where answered before and now
        if case_id in accepted_before and case_id not in rejected_now:
            row = expect.matrix(over[case_id], [case_id])[:1]
            actual = np.concatenate([actual, row])
            carriers.append(over[case_id])
            ids.append(case_id)
    compared = Comparison(
        actual,
        baseline_recording.matrix(ids),
        ids,
        f"{len(ids)} inputs vs the baseline ({baseline_recording.manifest['origin']})",
    )

    def vectors(compared: Comparison, limits: Tolerances) -> Verdicts:
        return baseline_checks.vectors(
            compared, limits.cosine_atol, limits.reference_atol, acceptance=acceptance
        )

    expect_agreement(expect, vectors, settings, compared, carriers)


@pytest.mark.requirement("baseline.shape")
def test_answers_keep_their_shape(
    expect: Expect, answers: Answers, baseline_behaviour: dict[str, Any]
) -> None:
    now = {
        encoding: shape_of(answers.get(PROBE, encoding_format=encoding))
        for encoding in ("float", "base64")
    }
    expect(baseline_checks.shape(baseline_behaviour["shape"], now))


@pytest.mark.requirement("baseline.errors")
def test_bad_requests_answered_as_before(
    expect: Expect, bad_answers: BadAnswers, baseline_behaviour: dict[str, Any]
) -> None:
    now = {bad.id: error_answer(bad_answers(bad)) for bad in load_bad_requests()}
    expect(baseline_checks.errors(baseline_behaviour["errors"], now))
