"""Checks of how a server answers requests it should refuse."""

from __future__ import annotations

from conformance.checks.result import CheckResult
from conformance.client.decode import ErrorBody


def _status(status: int) -> str:
    return f"HTTP {status}"


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


def check_error_envelope(body: ErrorBody, what: str) -> CheckResult:
    """The error body is OpenAI's {'error': {'message', 'type', 'param', 'code'}}; reports
    which fields deviate (param and code may be null but must be present)."""
    deviations = body.deviations()
    measured = "; ".join(deviations) if deviations else "conforming envelope"
    return CheckResult(
        not deviations, measured, "{'error': {message, type, param, code}}", None, what
    )


def check_unknown_model(status: int, body: ErrorBody) -> CheckResult:
    """An unknown model gets 404 with code 'model_not_found', as OpenAI answers."""
    ok = status == 404 and body.code == "model_not_found"
    return CheckResult(
        ok,
        f"HTTP {status}, code {body.code!r}",
        "HTTP 404, code 'model_not_found'",
        None,
        "answer to an unknown model",
    )
