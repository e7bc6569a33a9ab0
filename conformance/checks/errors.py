"""The ``errors.*`` requirements: bad requests get a clean 4xx in OpenAI's envelope, arguable
ones no 5xx, and the server keeps working after each one."""

from __future__ import annotations

from conformance.checks.compare import check_same_vectors
from conformance.checks.result import CheckResult
from conformance.checks.status import check_embedded, check_no_5xx, check_rejected
from conformance.wire import EmbeddingBatch, ErrorBody, Matrix

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


def rejected(status: int, what: str) -> CheckResult:
    """A request the API cannot read gets a 4xx: a 2xx means garbage was accepted, a 5xx that
    it was never validated (unvalidated input reaching the engine)."""
    return check_rejected(status, what)


def no_5xx(status: int, envelope_ok: bool, what: str) -> CheckResult:
    """An odd but arguable request is refused or served, never crashes the handler (5xx)."""
    return check_no_5xx(status, envelope_ok, what)


def wire_encoding(batch: EmbeddingBatch) -> str:
    """How an answer's embeddings came on the wire ('float', 'base64', or several, sorted)."""
    return ", ".join(sorted({item.encoding for item in batch.items})) or "no embeddings"


def lenient_but_right(
    accepted: Matrix,
    stands_for: Matrix,
    atol: float,
    what: str,
    *,
    accepted_encoding: str,
    stands_for_encoding: str,
) -> CheckResult:
    """A request a lenient server accepts is answered exactly like the valid request it stands
    for: the same vectors, in the same wire encoding. Catches a value coerced and then ignored
    ('32' for dimensions accepted, full-length vectors returned), and an unknown
    encoding_format answered with base64 where the request without it gets floats (a client
    that sent none reads a string where it expects numbers)."""
    if accepted_encoding != stands_for_encoding:
        return CheckResult(
            False,
            f"{accepted_encoding} embeddings",
            f"{stands_for_encoding} embeddings",
            None,
            f"{what}: not in the encoding the request it stands for gets",
        )
    return check_same_vectors(accepted, stands_for, atol, what)


def envelope(body: ErrorBody, what: str) -> CheckResult:
    """The error body is OpenAI's {'error': {'message', 'type', 'param', 'code'}}, as OpenAI
    clients parse it; reports which fields deviate (param and code may be null but must be
    present). Catches flat {'detail': ...} or plain-text bodies clients cannot surface."""
    deviations = envelope_deviations(body)
    measured = "; ".join(deviations) if deviations else "conforming envelope"
    return CheckResult(
        not deviations, measured, "{'error': {message, type, param, code}}", None, what
    )


def unknown_model(status: int, body: ErrorBody, what: str) -> CheckResult:
    """An unknown model is refused (a 4xx), with 404 and code 'model_not_found' as OpenAI
    answers. Catches unknown models silently served by a default model, or a generic 400/500."""
    refused = check_rejected(status, what)
    if not refused.passed:
        return refused
    ok = status == 404 and body.code == "model_not_found"
    return CheckResult(
        ok,
        f"HTTP {status}, code {body.code!r}",
        "HTTP 404, code 'model_not_found'",
        None,
        "answer to an unknown model",
    )


def content_type(status: int, what: str) -> CheckResult:
    """A JSON body sent as text/plain gets a 4xx: browsers send text/plain cross-site without
    a CORS preflight, so a local server that accepts it can be driven by any web page."""
    return check_rejected(status, what)


def unknown_value_rejected(status: int, what: str) -> CheckResult:
    """An unknown value of a known optional field (encoding_format 'unknown', '', 123) gets a
    4xx. Hygiene, a SHOULD: an answer as if the field were absent is right, and
    errors.lenient-but-right judges that it is (float vectors equal to the plain request's);
    a 5xx fails errors.no-5xx. Catches handlers that never validate the field ('base64' if it
    says so, floats for anything else), so a client's typo ('base-64') goes unseen."""
    return check_rejected(status, what)


def recovers(
    status: int,
    envelope_ok: bool,
    what: str,
    retries: int | None = None,
    retried_status: int | None = None,
) -> CheckResult:
    """After a bad request, the next valid request still gets its embeddings, judged on its
    first answer (never a retried one). When that answer was a 429 or 503, ``retries`` says how
    many times a client that retries asked again, and ``retried_status`` what it got in the
    end. Catches a poisoned worker or a wedged batch queue after one bad input, and a server
    that answers 503 to the requests after a rejected one, which retries hide (the OpenAI SDK
    gives up after two)."""
    if retries is not None:
        times = f"{retries} time{'s' if retries != 1 else ''}"
        what += (
            f"; a client that retries asked again {times} and got HTTP {retried_status} "
            "(the OpenAI SDK gives up after 2 retries)"
        )
    return check_embedded(status, envelope_ok, what)


def batch_limit(status: int, what: str) -> CheckResult:
    """More inputs than OpenAI's limit of 2048 get a 4xx (a 413 included) rather than an
    unbounded batch that can exhaust the server's memory."""
    return check_rejected(status, what, large=True)
