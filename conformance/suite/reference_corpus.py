"""Helpers of the tests that compare the server's vectors with recorded ones (a reference, a
baseline): embed the reference corpus in batches, judge agreement by cosine and max |Δ|."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NoReturn

import numpy as np
import pytest

from conformance.checks.agreement import Comparison
from conformance.checks.result import Verdicts, format_value
from conformance.client import Exchange
from conformance.corpus import Case
from conformance.references import Recording, reference_cases
from conformance.run.expect import Expect
from conformance.run.settings import Settings
from conformance.suite.pytest_fixtures import Answers
from conformance.tolerances import LARGE_BATCH, Tolerances
from conformance.wire import Matrix

CHUNK = 16  # inputs per request: a realistic batch, and few requests for the whole corpus
CASES = {c.id: c for c in reference_cases()}
OVER_CONTEXT = [c.id for c in CASES.values() if "over-context" in c.tags]


def within_context() -> list[Case]:
    """Every corpus input within the model's context."""
    return [c for c in CASES.values() if "over-context" not in c.tags]


def compared_cases(reference: Recording, context: int | None = None) -> list[Case]:
    """Every corpus input within the model's context that the reference has a vector for, and
    (by the reference's token count) within ``context``, a server's shorter one."""
    return [c for c in within_context() if c.id in reference.rows and fits(reference, c, context)]


def fits(reference: Recording, case: Case, context: int | None) -> bool:
    tokens = reference.token_ids(case.id)
    return context is None or tokens is None or len(tokens) <= context


def no_token_ids(reference: Recording) -> NoReturn:
    """End a test that needs the reference's token ids, which it did not record."""
    pytest.skip(
        f"not applicable: the reference ({reference.source}) recorded no token ids "
        "(a golden recorded before they were, or an endpoint without /tokenize)"
    )


def spread(cases: Sequence[Case], count: int) -> list[Case]:
    """``count`` cases taken evenly across the corpus order: every kind, script and length."""
    return [cases[i * len(cases) // count] for i in range(min(count, len(cases)))]


SHORT = 150  # characters: the large batch tests rows, not lengths (single-vs-batch does that)


def large_batch_cases(reference: Recording | None, context: int | None) -> list[Case]:
    """batch.large's request: LARGE_BATCH short corpus inputs, those the reference has when
    there is one."""
    usable = compared_cases(reference, context) if reference else within_context()
    return spread([c for c in usable if len(c.text) <= SHORT], LARGE_BATCH)


def embed_cases(
    expect: Expect, answers: Answers, cases: Sequence[Case]
) -> tuple[Matrix, list[Exchange]]:
    """The server's vectors for ``cases`` (float output, in batches of CHUNK), with the
    exchange that carried each row (for the reproducer)."""
    return embed_texts(expect, answers, [(c.id, c.text) for c in cases])


def embed_texts(
    expect: Expect,
    answers: Answers,
    inputs: Sequence[tuple[str, str | list[int]]],
    chunk_size: int = CHUNK,
) -> tuple[Matrix, list[Exchange]]:
    """The server's vectors for (id, text or token ids) inputs, in batches of ``chunk_size``,
    with the exchange that carried each row."""
    rows, carriers = [], []
    for start in range(0, len(inputs), chunk_size):
        chunk = inputs[start : start + chunk_size]
        exchange = answers.get([text for _, text in chunk], encoding_format="float")
        rows.append(expect.matrix(exchange, [case_id for case_id, _ in chunk]))
        carriers += [exchange] * len(chunk)
    try:
        return np.concatenate(rows), carriers
    except ValueError as exc:
        expect.unmeasurable(str(exc), carriers[0], because=("dimension.*",))


def owed_notes(cases: Sequence[Case], distances: Sequence[float], limit: float) -> list[str]:
    """What is owed for each input the reference reads otherwise than it is written (its
    tokenizer deletes controls, a BOM, zero-width characters) that the server's vector
    disagrees with (1 - cosine past ``limit``)."""
    return [
        f"{case.id} disagrees: the reference deletes {', '.join(case.dropped())} from it and "
        f"embeds {_shown(case.reads_as)!r}; that text's vector is owed (a server that cuts or "
        "rewrites the text at such a character answers for another text)"
        for case, distance in zip(cases, distances, strict=True)
        if case.reads_as is not None and not distance <= limit
    ]


def _shown(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def reference_matrix(reference: Recording, cases: Sequence[Case]) -> Matrix:
    return reference.matrix([c.id for c in cases])


# A check of agreement with recorded vectors, given the tier's limits
AgreementCheck = Callable[[Comparison, Tolerances], Verdicts]


def expect_agreement(
    expect: Expect,
    check: AgreementCheck,
    settings: Settings,
    compared: Comparison,
    carriers: Sequence[Exchange],
) -> None:
    """Judge agreement with the requirement's own check (cosine, its median, max |Δ|); the
    reproducer is the request that carried the worst input."""
    results = check(compared, settings.tolerances)
    for result in results:
        carrier = carriers[result.index] if result.index is not None else None
        expect(result, exchange=carrier, cases=compared.ids)
    if len(compared.ids) > 1:  # the margins of a whole set, printed under 'notes'
        cosine, diff = format_value(results[0].measured), format_value(results[-1].measured)
        median = f" (median {format_value(results[1].measured)})" if len(results) == 3 else ""
        expect.note(f"{compared.what}: 1 - cosine <= {cosine}{median}, max |Δ| <= {diff}")


def compared_with(
    reference: Recording, actual: Matrix, expected: Matrix, ids: Sequence[str], what: str
) -> Comparison:
    """The server's vectors against the reference's, as directions when the reference
    normalizes: the norm is normalization.unit-norm's to judge, once."""
    if reference.normalized:
        what += " (as directions: the norm is normalization.unit-norm's)"
    return Comparison(actual, expected, ids, what, reference.normalized, reference.model)
