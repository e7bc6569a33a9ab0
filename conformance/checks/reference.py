"""The ``reference.*`` requirements: the server's vectors are the reference model's."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.checks.agreement import (
    Comparison,
    check_agreement,
    cosine_scores,
    top_k,
    with_tier_hint,
)
from conformance.checks.result import CheckResult, Verdicts, no_offenders
from conformance.checks.status import check_refusal_allowed, is_refusal, unmeasurable
from conformance.tolerances import Tolerances
from conformance.wire import Matrix


def agreement(compared: Comparison, limits: Tolerances) -> Verdicts:
    """Every input of the reference corpus embeds as the reference model embeds it: 1 - cosine
    (each input's, and the median's) and max |Δ| within the precision tier, the vectors compared
    as directions when the reference normalizes (the norm is normalization.unit-norm's).
    Catches CLS instead of mean pooling, a dropped layer, silent truncation, positions counted
    from the wrong start and precision lost on the way. A failure names the precision tier the
    vectors fit, if any."""
    return with_tier_hint(
        check_agreement(
            compared, limits.cosine_atol, limits.reference_atol, limits.cosine_median_atol
        ),
        compared.model,
    )


def over_context(
    status: int, compared: Comparison | None, cosine_atol: float, atol: float
) -> Verdicts:
    """An input past the model's context is cleanly refused with a 4xx, or embedded as
    the reference embeds its truncated form. Catches truncation at the wrong length, from the
    wrong end, or without the closing [SEP]."""
    if is_refusal(status, large=True):
        return (check_refusal_allowed(status, "the reference's truncation"),)
    if compared is None:
        return (unmeasurable("answered, but no vector to compare"),)
    return check_agreement(compared, cosine_atol, atol)


def token_ids(compared: Comparison, limits: Tolerances) -> Verdicts:
    """Token ids made with the reference tokenizer embed like their text, as the reference
    embeds it (each input and the median, as reference.agreement). Catches ids re-tokenized as
    text, special tokens added twice, ids shifted."""
    return check_agreement(
        compared, limits.cosine_atol, limits.reference_atol, limits.cosine_median_atol
    )


def retrieval(
    queries: Matrix,
    documents: Matrix,
    reference_queries: Matrix,
    reference_documents: Matrix,
    query_ids: Sequence[str],
    document_ids: Sequence[str],
    tie: float,
    k: int = 3,
) -> CheckResult:
    """Each query's top-k documents (as a set) are the reference's, except that a document the
    reference scores within ``tie`` of its k-th may take that place: the precision tier's
    largest score change (tolerances.py), so two near-tied documents may swap and nothing else.

    Element-wise limits bound each vector; this bounds what users do with them: a server whose
    small errors all lean one way can still rank documents differently."""
    mine, expected = top_k(queries, documents, k), top_k(reference_queries, reference_documents, k)
    scores = cosine_scores(reference_queries, reference_documents)
    offenders: list[int] = []
    example = ""
    for i, (row, theirs) in enumerate(zip(scores, expected, strict=True)):
        kth = float(row[theirs[-1]])
        entered = [j for j in mine[i] if j not in theirs and kth - float(row[j]) > tie]
        if entered and not offenders:
            names = [[document_ids[j] for j in top] for top in (mine[i], theirs)]
            gap = kth - float(row[entered[0]])
            example = (
                f"{query_ids[i]}: top-{k} {names[0]}, reference {names[1]} "
                f"({document_ids[entered[0]]} scored {gap:.3g} below the last of the "
                f"reference's top-{k})"
            )
        if entered:
            offenders.append(i)
    what = f"queries ranked differently (top-{k}, beyond ties within {tie:g})"
    return no_offenders(offenders, len(mine), what, example)
