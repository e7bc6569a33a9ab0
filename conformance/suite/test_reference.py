"""Agreement with a reference model over the reference corpus (golden files, a model run here, or
a live reference endpoint): the vectors are not only well-formed, they are the right ones."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.checks import agreement as checks
from conformance.checks import status
from conformance.expect import Expect
from conformance.references import Recording
from conformance.settings import Settings
from conformance.suite.pytest_fixtures import Answers
from conformance.suite.reference_corpus import (
    CASES,
    OVER_CONTEXT,
    compared_cases,
    embed_cases,
    expect_agreement,
    no_token_ids,
    reference_matrix,
)


@pytest.mark.requirement("reference.agreement")
def test_every_input_agrees_with_the_reference(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    needs_reference: Recording,
    context: int | None,
) -> None:
    inside = compared_cases(needs_reference, context)
    actual, carriers = embed_cases(expect, answers, "reference.agreement", inside)
    # Past the server's (shorter) context, each input goes alone: a clean refusal is allowed,
    # an answer must still be the reference's (a server that truncates silently fails here).
    cases, refused = list(inside), []
    for case in compared_cases(needs_reference):
        if case in inside:
            continue
        exchange = answers.get(case.text, encoding_format="float")
        if status.is_refusal(exchange.status, large=True):
            refused.append(case.id)
            continue
        row = expect.matrix("reference.agreement", exchange, [case.id])[:1]
        actual, carriers = np.concatenate([actual, row]), [*carriers, exchange]
        cases.append(case)
    if refused:
        listed = ", ".join(refused)
        note = f"refused, past the context of {context} tokens: {listed}"
        expect.note("reference.agreement", note)
    rejected = needs_reference.rejected
    if rejected:  # nothing dropped silently: name what the reference could not give
        listed = ", ".join(f"{case_id} ({why[:60]})" for case_id, why in rejected.items())
        expect.note("reference.agreement", f"not compared, the reference rejected: {listed}")
    expected, ids = reference_matrix(needs_reference, cases), [c.id for c in cases]
    expect.series("norms", ids, np.linalg.norm(actual, axis=1).tolist())
    if actual.shape == expected.shape:  # else the checks below fail it, naming the dimensions
        distances = checks.cosine_distances(actual, expected).tolist()
        expect.series("agreement", ids, distances, settings.tolerances.cosine_atol)
    expect_agreement(
        expect,
        "reference.agreement",
        settings,
        actual,
        expected,
        ids,
        carriers,
        f"{len(cases)} inputs vs {needs_reference.model} ({needs_reference.source})",
    )


@pytest.mark.requirement("reference.over-context")
@pytest.mark.parametrize("case_id", OVER_CONTEXT)
def test_input_past_the_context(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    needs_reference: Recording,
    case_id: str,
) -> None:
    exchange = answers.get(CASES[case_id].text, encoding_format="float")
    if status.is_refusal(exchange.status, large=True):
        verdict = status.check_refusal_allowed(exchange.status, "the reference's truncation")
        expect("reference.over-context", verdict, exchange=exchange, cases=[case_id])
        expect.note("reference.over-context", f"rejected with HTTP {exchange.status}")
        return
    actual = expect.matrix("reference.over-context", exchange, [case_id])[:1]
    expected = needs_reference.vector(case_id)
    if expected is None:
        expect.note(
            "reference.over-context",
            "answered but not compared: the reference rejects inputs past its context",
        )
        return
    expect_agreement(
        expect,
        "reference.over-context",
        settings,
        actual,
        expected[None, :],
        [case_id],
        [exchange],
        f"truncated by the server vs by the reference ({needs_reference.manifest['over_context']})",
    )


@pytest.mark.requirement("reference.retrieval")
def test_retrieval_finds_the_reference_neighbours(
    expect: Expect, answers: Answers, needs_reference: Recording, context: int | None
) -> None:
    cases = compared_cases(needs_reference, context)
    actual, _ = embed_cases(expect, answers, "reference.retrieval", cases)
    row = {c.id: i for i, c in enumerate(cases)}
    queries = [c.id for c in cases if "retrieval-query" in c.tags]
    documents = [c.id for c in cases if "retrieval-doc" in c.tags]
    if not queries or not documents:
        pytest.skip("the reference has no vectors for the retrieval set")
    result = checks.check_same_neighbours(
        actual[[row[i] for i in queries]],
        actual[[row[i] for i in documents]],
        needs_reference.matrix(queries),
        needs_reference.matrix(documents),
        queries,
        documents,
    )
    expect("reference.retrieval", result)


@pytest.mark.requirement("reference.token-ids")
def test_token_ids_embed_like_their_text(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    needs_reference: Recording,
    context: int | None,
) -> None:
    cases = [
        c
        for c in compared_cases(needs_reference, context)
        if "token-ids" in c.tags and needs_reference.token_ids(c.id)
    ]
    if not cases:
        no_token_ids(needs_reference)
    ids = [c.id for c in cases]
    tokens = [needs_reference.token_ids(case_id) for case_id in ids]
    exchange = answers.get(tokens, encoding_format="float")
    expect.refused("reference.token-ids", exchange, "token-id input")
    actual = expect.matrix("reference.token-ids", exchange, ids)
    expect_agreement(
        expect,
        "reference.token-ids",
        settings,
        actual,
        reference_matrix(needs_reference, cases),
        ids,
        [exchange] * len(ids),
        f"{len(ids)} token-id inputs (reference tokenizer) vs their text",
    )
