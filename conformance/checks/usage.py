"""Checks of token accounting across requests."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.checks.result import CheckResult, equals, no_offenders


def check_batch_additive(
    batch_prompt_tokens: int, single_prompt_tokens: Sequence[int]
) -> CheckResult:
    """A batch's prompt_tokens equals the sum of its inputs' counts when sent one by one.

    Catches usage that counts only the first input, or the padded batch (count x longest)."""
    total = sum(single_prompt_tokens)
    return equals(
        batch_prompt_tokens,
        total,
        f"batch prompt_tokens vs the sum over {len(single_prompt_tokens)} single requests",
    )


def check_monotonic(prompt_tokens: Sequence[int]) -> CheckResult:
    """Token counts of ever-longer extensions of one text never decrease."""
    offenders = [i for i in range(1, len(prompt_tokens)) if prompt_tokens[i] < prompt_tokens[i - 1]]
    example = (
        f"{prompt_tokens[offenders[0]]} tokens after {prompt_tokens[offenders[0] - 1]}"
        if offenders
        else ""
    )
    return no_offenders(offenders, len(prompt_tokens), "longer texts with fewer tokens", example)
