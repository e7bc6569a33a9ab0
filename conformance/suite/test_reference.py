"""Agreement with a reference model over the reference corpus (golden files, a model run here, or
a live reference endpoint): the vectors are not only well-formed, they are the right ones."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from conformance.checks import reference as checks
from conformance.checks.result import CheckResult, format_value
from conformance.client import Exchange
from conformance.corpus import Case
from conformance.expect import Expect, unsupported
from conformance.options import Settings
from conformance.references import Recording, reference_cases
from conformance.suite.fixtures import Answers

Matrix = npt.NDArray[np.float64]
CHUNK = 16  # inputs per request: a realistic batch, and few requests for the whole corpus
CASES = {c.id: c for c in reference_cases()}
OVER_CONTEXT = [c.id for c in CASES.values() if "over-context" in c.tags]


def compared_cases(reference: Recording) -> list[Case]:
    """Every corpus input within the model's context that the reference has a vector for."""
    return [c for c in CASES.values() if "over-context" not in c.tags and c.id in reference.rows]


def embed_cases(
    expect: Expect, answers: Answers, requirement: str, cases: Sequence[Case]
) -> tuple[Matrix, list[Exchange]]:
    """The server's vectors for ``cases`` (float output, in batches of CHUNK), with the
    exchange that carried each row (for the reproducer)."""
    rows, carriers = [], []
    for start in range(0, len(cases), CHUNK):
        chunk = cases[start : start + CHUNK]
        exchange = answers.get([c.text for c in chunk], encoding_format="float")
        rows.append(expect.matrix(requirement, exchange, [c.id for c in chunk]))
        carriers += [exchange] * len(chunk)
    try:
        return np.concatenate(rows), carriers
    except ValueError as exc:
        pytest.skip(f"{requirement} could not be measured: {exc} (see dimension.*)")


def reference_matrix(reference: Recording, cases: Sequence[Case]) -> Matrix:
    return reference.matrix([c.id for c in cases])


def expect_agreement(
    expect: Expect,
    requirement: str,
    settings: Settings,
    actual: Matrix,
    expected: Matrix,
    ids: Sequence[str],
    carriers: Sequence[Exchange],
    what: str,
) -> None:
    """Cosine first (it names direction errors such as wrong pooling), then max |Δ| (it names
    precision loss); the reproducer is the request that carried the worst input."""
    t = settings.tolerances
    results = (
        checks.check_cosine(actual, expected, ids, t.cosine_atol, what),
        checks.check_max_abs_diff(actual, expected, ids, t.reference_atol, what),
    )
    for result in results:
        carrier = carriers[result.index] if result.index is not None else None
        expect(requirement, result, exchange=carrier, cases=ids)
    cosine, diff = (format_value(r.measured) for r in results)
    expect.note(requirement, f"{what}: 1 - cosine <= {cosine}, max |Δ| <= {diff}")


@pytest.mark.requirement("reference.agreement")
def test_every_input_agrees_with_the_reference(
    expect: Expect, settings: Settings, answers: Answers, needs_reference: Recording
) -> None:
    cases = compared_cases(needs_reference)
    actual, carriers = embed_cases(expect, answers, "reference.agreement", cases)
    expect_agreement(
        expect,
        "reference.agreement",
        settings,
        actual,
        reference_matrix(needs_reference, cases),
        [c.id for c in cases],
        carriers,
        f"{len(cases)} inputs vs {needs_reference.model} ({needs_reference.manifest['source']})",
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
    if 400 <= exchange.status < 500:
        verdict = CheckResult(
            True, f"HTTP {exchange.status}", "4xx, or the reference's truncation", None, "rejected"
        )
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
    expect: Expect, answers: Answers, needs_reference: Recording
) -> None:
    cases = compared_cases(needs_reference)
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
    expect: Expect, settings: Settings, answers: Answers, needs_reference: Recording
) -> None:
    cases = [c for c in compared_cases(needs_reference) if c.token_ids]
    ids = [c.id for c in cases]
    exchange = answers.get([list(c.token_ids or ()) for c in cases], encoding_format="float")
    if 400 <= exchange.status < 500:
        unsupported(f"token-id input rejected with HTTP {exchange.status}")
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
