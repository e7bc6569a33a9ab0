"""Checks of how a request was answered at all: embedded, refused cleanly, or crashed."""

from __future__ import annotations

from conformance.checks.result import CheckResult

EMBEDDED = "HTTP 200 with an embeddings envelope"


def _status(status: int) -> str:
    return f"HTTP {status}"


def check_embedded(status: int, has_envelope: bool, what: str) -> CheckResult:
    """A request that must be served got a 200 with an embeddings envelope.

    Also the verdict on a requirement that could not be measured because the server did not
    answer its request properly: fail closed, never skip."""
    ok = status == 200 and has_envelope
    return CheckResult(ok, _status(status), EMBEDDED, None, what)


def check_rejected(status: int, what: str) -> CheckResult:
    """A malformed request gets a 4xx: a 2xx means garbage was accepted, a 5xx that it was
    never validated."""
    return CheckResult(400 <= status < 500, _status(status), "4xx", None, what)


def check_no_5xx(status: int, envelope_ok: bool, what: str) -> CheckResult:
    """An arguable request may be refused (4xx) or served (200 with a valid envelope), but it
    must never crash the handler (5xx)."""
    if status >= 500:
        return CheckResult(False, _status(status), "< 500", None, what)
    if status == 200 and not envelope_ok:
        return CheckResult(
            False, "HTTP 200 without a valid envelope", "4xx, or 200 with one", None, what
        )
    return CheckResult(True, _status(status), "< 500", None, what)


def check_refusal_allowed(status: int, alternative: str) -> CheckResult:
    """Where the contract allows either a clean refusal or ``alternative`` (e.g. truncation
    past the context), a 4xx passes; what a 200 carries is judged by other checks."""
    return CheckResult(
        400 <= status < 500, _status(status), f"4xx, or {alternative}", None, "rejected"
    )


def unmeasurable(reason: str) -> CheckResult:
    """The verdict on a requirement whose measurement the server's answer made impossible
    (vectors that cannot be stacked, no base64 where base64 was asked, no token count): the
    suite fails closed, because a skip would let a broken server pass unseen."""
    return CheckResult(False, "not measurable", "an answer it can be measured on", None, reason)


def no_answer(expected: str, reason: str, measured: str = "no answer") -> CheckResult:
    """The verdict when a request got no usable answer at all (timeout, reset, a client
    error): the requirement could not be met, so it fails."""
    return CheckResult(False, measured, expected, None, reason)
