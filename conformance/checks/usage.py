"""The ``usage.*`` requirements: token accounting across requests."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.checks.result import CheckResult, equals, no_offenders

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
) -> CheckResult:
    """Each input's prompt_tokens is its token count by the reference tokenizer, with or without
    the special tokens it adds ([CLS], [SEP]): servers differ there, clients do not care.

    Catches usage counted in characters or words (infinity-emb 0.0.78: "hello" -> 5), or in
    padded tokens. The numbers of the first offenders are shown side by side, with the text's
    length in characters and words, which names the usual mistake."""
    offenders = [
        i
        for i, (count, expected) in enumerate(zip(reported, tokens, strict=True))
        if count not in (expected, expected - special_tokens)
    ]
    listed = "; ".join(
        f"{ids[i]}: prompt_tokens {reported[i]}, reference tokenizer {tokens[i]} "
        f"({tokens[i] - special_tokens} without special tokens), "
        f"{len(texts[i])} characters, {len(texts[i].split())} words"
        for i in offenders[:LISTED]
    )
    return no_offenders(offenders, len(reported), "inputs with another count", listed)


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
