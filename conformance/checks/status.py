"""Checks of how a request was answered at all: embedded, refused cleanly, or crashed."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.checks.result import CheckResult

EMBEDDED = "HTTP 200 with an embeddings envelope"
# 4xx statuses that say nothing about the request's content: never a clean refusal of it
NOT_ABOUT_THE_REQUEST = {
    401: "authentication failed mid-run",
    403: "access denied mid-run",
    407: "proxy authentication required",
    408: "the server timed out reading the request",
    429: "rate limited, still after retries",
}
TOO_LARGE = 413


def is_refusal(status: int, large: bool = False) -> bool:
    """A clean refusal of what the request asks: a 4xx about its content. Not an
    authentication failure or a rate limit (the request was never judged), and a 413 only for
    a request ``large`` enough for a size limit to apply."""
    if status == TOO_LARGE:
        return large
    return 400 <= status < 500 and status not in NOT_ABOUT_THE_REQUEST


def not_a_refusal(status: int) -> str | None:
    """Why a 4xx is no refusal of the request's content (None for any other status)."""
    if status == TOO_LARGE:
        return "HTTP 413 for a request no size limit applies to"
    reason = NOT_ABOUT_THE_REQUEST.get(status)
    return None if reason is None else f"HTTP {status}: {reason}, not a refusal of the request"


def _status(status: int) -> str:
    return f"HTTP {status}"


def check_embedded(status: int, has_envelope: bool, what: str) -> CheckResult:
    """A request that must be served got a 200 with an embeddings envelope.

    Also the verdict on a requirement that could not be measured because the server did not
    answer its request properly: fail closed, never skip."""
    ok = status == 200 and has_envelope
    return CheckResult(ok, _status(status), EMBEDDED, None, what)


def check_rejected(status: int, what: str, large: bool = False) -> CheckResult:
    """A malformed request gets a 4xx about its content: a 2xx means garbage was accepted, a
    5xx that it was never validated, a 401 or 429 that it was never judged."""
    refused = is_refusal(status, large)
    reason = None if refused else not_a_refusal(status)
    detail = what if reason is None else f"{what} ({reason})"
    return CheckResult(refused, _status(status), "4xx", None, detail)


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
        is_refusal(status, large=True), _status(status), f"4xx, or {alternative}", None, "rejected"
    )


def unmeasurable(reason: str, because: Sequence[str] = ()) -> CheckResult:
    """The verdict on a requirement whose measurement the server's answer made impossible
    (vectors that cannot be stacked, no base64 where base64 was asked, no token count): the
    suite fails closed, because a skip would let a broken server pass unseen. ``because``: the
    requirements that judge what made it so; the failure follows from theirs."""
    see = f" (see {', '.join(because)})" if because else ""
    return CheckResult(
        False,
        "not measurable",
        "an answer it can be measured on",
        None,
        reason + see,
        follows_from=tuple(because),
    )


def no_answer(expected: str, reason: str, measured: str = "no answer") -> CheckResult:
    """The verdict when a request got no usable answer at all (timeout, reset, a client
    error): the requirement could not be met, so it fails."""
    return CheckResult(False, measured, expected, None, reason)


def declared_but_refused(status: int, what: str, declared: str) -> CheckResult:
    """The verdict on an optional feature cleanly refused although the vendor declared it
    (``declared``: the capability named in --capabilities): a promise not kept fails."""
    refusal = f"{what} refused with HTTP {status}"
    return CheckResult(
        False,
        f"HTTP {status}",
        "served",
        None,
        f"{refusal}, but --capabilities declares {declared}",
    )
