"""The ``usage.*`` requirements: token accounting across requests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from conformance.checks.result import CheckResult, equals, no_offenders
from conformance.checks.status import unmeasurable

LISTED = 3  # offending inputs named in a message, side by side with the truth


def batch_additive(batch_prompt_tokens: int, single_prompt_tokens: Sequence[int]) -> CheckResult:
    """A batch's prompt_tokens equals the sum of its inputs' counts when sent one by one.

    Catches usage that counts only the first input, or the padded batch (count x longest)."""
    total = sum(single_prompt_tokens)
    return equals(
        batch_prompt_tokens,
        total,
        f"batch prompt_tokens vs the sum over {len(single_prompt_tokens)} single requests",
    )


def counts_tokens(
    reported: Sequence[int],
    tokens: Sequence[int],
    special_tokens: int,
    texts: Sequence[str],
    ids: Sequence[str],
    distances: Sequence[float | None] | None = None,
    cosine_atol: float = 0.0,
    vectors_judged_by: Sequence[str] = (),
) -> CheckResult:
    """Each input's prompt_tokens is its token count by the reference tokenizer, with all, some
    or none of the special tokens it adds ([CLS], [SEP]): servers differ there, clients do not
    care (a server that drops [SEP] counts the tokens it embedded, and reference.* fails it).

    Catches usage counted in characters or words (infinity-emb 0.0.78: "hello" -> 5), or in
    padded tokens. The numbers of the first offenders are shown side by side, with the text's
    length in characters and words, which names the usual mistake.

    ``distances`` (1 - cosine between each input's vector and the reference's; None where they
    cannot be compared) keep one root cause at one FAIL: a count that differs on an input whose
    vector turns away from the reference's (past ``cosine_atol``, the per-input limit of the
    tier, of the reference's model where measured, never past 0.5) is not judged, since the
    server tokenized that input otherwise and reference.agreement fails it; the record names
    those inputs. Precision loss barely turns a vector, so it never excuses a count. When no
    input's vector agrees, a differing count cannot be told from a tokenizer's: not measurable,
    a FAIL that follows from the requirements ``vectors_judged_by`` names (reference.agreement)."""
    distances = distances if distances is not None else [None] * len(reported)
    turned = [d is not None and not d <= cosine_atol for d in distances]
    differs = [
        i
        for i, (count, expected) in enumerate(zip(reported, tokens, strict=True))
        if not expected - special_tokens <= count <= expected
    ]
    otherwise = [i for i in differs if turned[i]]
    if otherwise and all(turned):
        return unmeasurable(
            f"{len(otherwise)} of {len(reported)} inputs with another count, and no input's "
            "vector agrees with the reference, so no count can be told from another "
            "tokenizer's",
            because=vectors_judged_by,
        )
    offenders = [i for i in differs if not turned[i]]
    listed = "; ".join(
        _side_by_side(i, reported, tokens, special_tokens, texts, ids) for i in offenders[:LISTED]
    )
    result = no_offenders(
        offenders, len(reported) - len(otherwise), "inputs with another count", listed
    )
    if not otherwise:
        return result
    named = ", ".join(
        f"{ids[i]} (prompt_tokens {reported[i]}, reference {tokens[i]}, "
        f"1 - cosine {distances[i]:.3g})"
        for i in otherwise
    )
    return replace(
        result,
        detail=f"{result.detail}; not judged, tokenized otherwise (see reference.agreement): "
        f"{named}",
    )


def _side_by_side(
    i: int,
    reported: Sequence[int],
    tokens: Sequence[int],
    special_tokens: int,
    texts: Sequence[str],
    ids: Sequence[str],
) -> str:
    return (
        f"{ids[i]}: prompt_tokens {reported[i]}, reference tokenizer {tokens[i]} "
        f"({tokens[i] - special_tokens} without special tokens), "
        f"{len(texts[i])} characters, {len(texts[i].split())} words"
    )


def monotonic_length(prompt_tokens: Sequence[int]) -> CheckResult:
    """Token counts of ever-longer extensions of one text grow, and never decrease: a count
    that never changes with length counts something else (requests, a constant)."""
    if len(prompt_tokens) > 1 and len(set(prompt_tokens)) == 1:
        return CheckResult(
            False,
            prompt_tokens[0],
            "growing with the text",
            None,
            f"prompt_tokens is {prompt_tokens[0]} for each of {len(prompt_tokens)} ever-longer "
            "extensions of one text",
        )
    offenders = [i for i in range(1, len(prompt_tokens)) if prompt_tokens[i] < prompt_tokens[i - 1]]
    example = (
        f"{prompt_tokens[offenders[0]]} tokens after {prompt_tokens[offenders[0] - 1]}"
        if offenders
        else ""
    )
    return no_offenders(offenders, len(prompt_tokens), "longer texts with fewer tokens", example)
