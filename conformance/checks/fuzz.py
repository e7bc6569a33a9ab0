"""The ``fuzz.*`` requirement: every generated request is answered as the label of its body
demands (the property each one must satisfy is judged here too)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from conformance.checks.result import CheckResult
from conformance.checks.status import is_refusal
from conformance.wire import EmbeddingBatch


def check_labelled_answer(
    label: str, status: int, envelope_ok: bool, count_ok: bool, what: str
) -> CheckResult:
    """valid -> 200 with a valid envelope (one item per input); invalid (a kind the error
    cases demand a 4xx for, at MUST) -> 4xx; arguable (hygiene included: a kind the error cases
    judge at SHOULD) -> anything but a 5xx (a 200 must still be a valid envelope)."""
    broken = status == 200 and not (envelope_ok and count_ok)
    measured = f"HTTP {status}" + (" with a broken envelope" if broken else "")
    if status >= 500:
        return CheckResult(False, measured, "< 500", None, f"{label} body: {what}")
    if label == "invalid":
        return CheckResult(is_refusal(status), measured, "4xx", None, f"invalid body: {what}")
    if label == "valid":
        ok = status == 200 and envelope_ok and count_ok
        return CheckResult(
            ok, measured, "HTTP 200 with a valid envelope", None, f"valid body: {what}"
        )
    ok = status != 200 or (envelope_ok and count_ok)
    return CheckResult(
        ok, measured, "4xx, or 200 with a valid envelope", None, f"arguable body: {what}"
    )


def robust(examples: int, violations: Sequence[CheckResult]) -> CheckResult:
    """Every generated body was answered as its label demands: valid ones with valid
    embeddings, invalid ones with a 4xx (only kinds the error cases demand one for at MUST:
    hygiene is their SHOULDs' to judge), none with a 5xx or a hang. Catches validation gaps
    that hand-written cases miss. Hypothesis shrinks a failure
    and replays the minimal example last, so the last violation is the one to report."""
    if violations:
        return violations[-1]
    return CheckResult(
        True, examples, "examples without a violation", None, "generated request bodies"
    )


def input_count(body: Mapping[str, Any]) -> int:
    """How many vectors a body asks for: a flat array of numbers is one input (token ids; lax
    servers read booleans, and numeric strings beside numbers, as such), any other array one
    per element (none for [], which a server may answer with no vectors), anything else one."""
    value = body.get("input")
    if not isinstance(value, list):
        return 1
    numbers = [isinstance(x, (int, float)) for x in value]
    token_ids = any(numbers) and all(
        number or spells_number(x) for number, x in zip(numbers, value, strict=True)
    )
    return 1 if token_ids else len(value)


def spells_number(value: object) -> bool:
    """A string a lax validator reads as the integer it spells ("12", " -3")."""
    return isinstance(value, str) and value.strip().lstrip("+-").isdigit()


def has_valid_vectors(batch: EmbeddingBatch | None, dim: int) -> bool:
    """Every vector is present, finite and of the native dimension."""
    if batch is None:
        return False
    return all(
        v is not None and len(v) == dim and bool(np.isfinite(v).all()) for v in batch.vectors
    )


def check_answer_to(
    label: str, body: Mapping[str, Any], status: int, batch: EmbeddingBatch | None, dim: int
) -> CheckResult:
    """One generated body's answer, judged by its label (see check_labelled_answer)."""
    envelope_ok = status == 200 and has_valid_vectors(batch, dim)
    count_ok = batch is not None and len(batch.items) == input_count(body)
    return check_labelled_answer(label, status, envelope_ok, count_ok, str(body)[:120])
