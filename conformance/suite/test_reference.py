"""Agreement with a reference model over the reference corpus (golden files, a model run here, or
a live reference endpoint): the vectors are not only well-formed, they are the right ones."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.checks import reference, status
from conformance.checks.agreement import cosine_distances
from conformance.corpus import Case
from conformance.references import Recording
from conformance.run.expect import Expect
from conformance.run.settings import Settings
from conformance.suite.pytest_fixtures import Answers
from conformance.suite.reference_corpus import (
    CASES,
    CHUNK,
    OVER_CONTEXT,
    compared_cases,
    compared_with,
    embed_cases,
    embed_texts,
    expect_agreement,
    no_token_ids,
    owed_notes,
    reference_matrix,
)


@pytest.fixture
def comparable(needs_reference: Recording, context: int | None) -> list[Case]:
    """The corpus inputs the reference has vectors for, within the server's context."""
    return compared_cases(needs_reference, context)


@pytest.mark.requirement("reference.agreement")
def test_every_input_agrees_with_the_reference(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    needs_reference: Recording,
    context: int | None,
    comparable: list[Case],
) -> None:
    inside = comparable
    actual, carriers = embed_cases(expect, answers, inside)
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
        row = expect.matrix(exchange, [case.id])[:1]
        actual, carriers = np.concatenate([actual, row]), [*carriers, exchange]
        cases.append(case)
    if refused:
        listed = ", ".join(refused)
        note = f"refused, past the context of {context} tokens: {listed}"
        expect.note(note)
    rejected = needs_reference.rejected
    if rejected:  # nothing dropped silently: name what the reference could not give
        listed = ", ".join(f"{case_id} ({why[:60]})" for case_id, why in rejected.items())
        expect.note(f"not compared, the reference rejected: {listed}")
    expected, ids = reference_matrix(needs_reference, cases), [c.id for c in cases]
    expect.series("norms", ids, np.linalg.norm(actual, axis=1).tolist())
    if actual.shape == expected.shape:  # else the checks below fail it, naming the dimensions
        distances = cosine_distances(actual, expected).tolist()
        expect.series("agreement", ids, distances, settings.tolerances.cosine_atol)
        for note in owed_notes(cases, distances, settings.tolerances.cosine_atol):
            expect.note(note)
    what = f"{len(cases)} inputs vs {needs_reference.model} ({needs_reference.source})"
    compared = compared_with(needs_reference, actual, expected, ids, what)
    expect_agreement(expect, reference.agreement, settings, compared, carriers)


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
    refused = status.is_refusal(exchange.status, large=True)
    compared = None
    if not refused:
        actual = expect.matrix(exchange, [case_id])[:1]
        expected = needs_reference.vector(case_id)
        if expected is None:
            expect.note("answered but not compared: the reference rejects inputs past its context")
            return
        truncation = needs_reference.manifest["over_context"]
        what = f"truncated by the server vs by the reference ({truncation})"
        compared = compared_with(needs_reference, actual, expected[None, :], [case_id], what)
    t = settings.tolerances
    verdicts = reference.over_context(exchange.status, compared, t.cosine_atol, t.reference_atol)
    for result in verdicts:
        expect(result, exchange=exchange, cases=[case_id])
    if refused:
        expect.note(f"rejected with HTTP {exchange.status}{read_whole(needs_reference, case_id)}")


def read_whole(reference: Recording, case_id: str) -> str:
    """Said of a refusal of an input the reference model reads whole (nomic's 2,048 tokens take
    what MiniLM's 256 do not): allowed, as a server may serve a shorter context, but named."""
    tokens, context = reference.token_ids(case_id), reference.max_tokens
    if tokens is None or context is None or len(tokens) > context:
        return ""
    return f", though {len(tokens)} tokens fit the reference's context of {context}"


@pytest.mark.requirement("reference.retrieval")
def test_retrieval_finds_the_reference_neighbours(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    needs_reference: Recording,
    comparable: list[Case],
) -> None:
    cases = comparable
    actual, _ = embed_cases(expect, answers, cases)
    row = {c.id: i for i, c in enumerate(cases)}
    queries = [c.id for c in cases if "retrieval-query" in c.tags]
    documents = [c.id for c in cases if "retrieval-doc" in c.tags]
    if not queries or not documents:
        pytest.skip("the reference has no vectors for the retrieval set")
    result = reference.retrieval(
        actual[[row[i] for i in queries]],
        actual[[row[i] for i in documents]],
        needs_reference.matrix(queries),
        needs_reference.matrix(documents),
        queries,
        documents,
        settings.tolerances.retrieval_tie,
    )
    expect(result)


@pytest.mark.requirement("reference.token-ids")
def test_token_ids_embed_like_their_text(
    expect: Expect,
    settings: Settings,
    answers: Answers,
    needs_reference: Recording,
    comparable: list[Case],
) -> None:
    inputs = [
        (c.id, tokens)
        for c in comparable
        if "token-ids" in c.tags and (tokens := needs_reference.token_ids(c.id))
    ]
    if not inputs:
        no_token_ids(needs_reference)
    ids = [case_id for case_id, _ in inputs]
    cases = [c for c in comparable if c.id in ids]
    # in batches of CHUNK, as the text corpus goes: a server's input limit (TEI's is 32) is
    # its own to set, and no reason to call token ids unmeasurable
    first = [tokens for _, tokens in inputs[:CHUNK]]
    expect.refused(answers.get(first, encoding_format="float"), "token-id input")
    actual, carriers = embed_texts(expect, answers, inputs)
    what = f"{len(ids)} token-id inputs (reference tokenizer) vs their text"
    compared = compared_with(
        needs_reference, actual, reference_matrix(needs_reference, cases), ids, what
    )
    expect_agreement(expect, reference.token_ids, settings, compared, carriers)
