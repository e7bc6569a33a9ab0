"""Checks of the error answers: OpenAI's error envelope and the unknown-model answer."""

from __future__ import annotations

from conformance.checks.result import CheckResult
from conformance.wire import ErrorBody

ENVELOPE_FIELDS = ("message", "type", "param", "code")


def envelope_deviations(body: ErrorBody) -> list[str]:
    """How an error body differs from OpenAI's envelope, one phrase each; empty when it
    conforms. ``param`` and ``code`` may be null, but must be present."""
    if not body.is_json:
        return ["body is not JSON"]
    if body.error is None:
        return ["no 'error' object at the top level"]
    problems = [f"error.{key} missing" for key in ENVELOPE_FIELDS if key not in body.error]
    for key in ("message", "type"):
        if key in body.error and not isinstance(body.error[key], str):
            problems.append(f"error.{key} is not a string")
    return problems


def check_error_envelope(body: ErrorBody, what: str) -> CheckResult:
    """The error body is OpenAI's {'error': {'message', 'type', 'param', 'code'}}; reports
    which fields deviate (param and code may be null but must be present)."""
    deviations = envelope_deviations(body)
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
