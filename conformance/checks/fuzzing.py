"""The property every generated request must satisfy, given the label of its body."""

from __future__ import annotations

from conformance.checks.result import CheckResult


def check_labelled_answer(
    label: str, status: int, envelope_ok: bool, count_ok: bool, what: str
) -> CheckResult:
    """valid -> 200 with a valid envelope (one item per input); invalid -> 4xx;
    arguable -> anything but a 5xx (a 200 must still be a valid envelope)."""
    broken = status == 200 and not (envelope_ok and count_ok)
    measured = f"HTTP {status}" + (" with a broken envelope" if broken else "")
    if status >= 500:
        return CheckResult(False, measured, "< 500", None, f"{label} body: {what}")
    if label == "invalid":
        return CheckResult(400 <= status < 500, measured, "4xx", None, f"invalid body: {what}")
    if label == "valid":
        ok = status == 200 and envelope_ok and count_ok
        return CheckResult(
            ok, measured, "HTTP 200 with a valid envelope", None, f"valid body: {what}"
        )
    ok = status != 200 or (envelope_ok and count_ok)
    return CheckResult(
        ok, measured, "4xx, or 200 with a valid envelope", None, f"arguable body: {what}"
    )
