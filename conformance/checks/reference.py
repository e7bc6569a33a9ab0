"""The ``reference.*`` requirements: the server's vectors are the reference model's."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.checks.agreement import Comparison, check_agreement, top_k
from conformance.checks.result import CheckResult, Verdicts, no_offenders
from conformance.checks.status import check_refusal_allowed, is_refusal, unmeasurable
from conformance.wire import Matrix


def agreement(compared: Comparison, cosine_atol: float, atol: float) -> Verdicts:
    """Every input of the reference corpus embeds as the reference model embeds it: 1 - cosine
    and max |Δ| within the precision tier. Catches CLS instead of mean pooling, a dropped layer,
    silent truncation and precision lost on the way."""
    return check_agreement(compared, cosine_atol, atol)


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


def token_ids(compared: Comparison, cosine_atol: float, atol: float) -> Verdicts:
    """Token ids made with the reference tokenizer embed like their text, as the reference
    embeds it. Catches ids re-tokenized as text, special tokens added twice, ids shifted."""
    return check_agreement(compared, cosine_atol, atol)


def retrieval(
    queries: Matrix,
    documents: Matrix,
    reference_queries: Matrix,
    reference_documents: Matrix,
    query_ids: Sequence[str],
    document_ids: Sequence[str],
    k: int = 3,
) -> CheckResult:
    """Each query's top-k documents (as a set) are the reference's.

    Element-wise limits bound each vector; this bounds what users do with them: a server whose
    small errors all lean one way can still rank documents differently."""
    mine = top_k(queries, documents, k)
    theirs = top_k(reference_queries, reference_documents, k)
    offenders = [i for i, (a, b) in enumerate(zip(mine, theirs, strict=True)) if set(a) != set(b)]
    example = ""
    if offenders:
        i = offenders[0]
        names = [[document_ids[j] for j in row] for row in (mine[i], theirs[i])]
        example = f"{query_ids[i]}: top-{k} {names[0]}, reference {names[1]}"
    return no_offenders(offenders, len(mine), f"queries ranked differently (top-{k})", example)
