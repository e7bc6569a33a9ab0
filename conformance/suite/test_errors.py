"""The error contract: bad requests get a clean 4xx in OpenAI's envelope, and the server
keeps working after each one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.checks import errors, status, vectors
from conformance.client import EmbeddingsClient, EndpointError
from conformance.corpus import load_bad_requests
from conformance.expect import Expect
from conformance.suite.pytest_fixtures import Answers, BadAnswers, send_bad_request

BAD = {bad.id: bad for bad in load_bad_requests()}
MUST_REJECT = [bad_id for bad_id, bad in BAD.items() if bad.expect == "reject"]
SHOULD_REJECT = [bad_id for bad_id, bad in BAD.items() if bad.expect == "should-reject"]
ARGUABLE = [bad_id for bad_id, bad in BAD.items() if bad.expect == "either"]
STANDS_FOR = [bad_id for bad_id, bad in BAD.items() if bad.equivalent is not None]
OPENAI_BATCH_LIMIT = 2048
BATCH_LIMIT_TIMEOUT = 5  # times --request-timeout: a slow server computes 2,049 vectors first
OVER_CONTEXT_WORDS = 3000  # far past the usual 512-token (or 8k-character) contexts


def rejection(bad_id: str) -> Any:
    """A (requirement, bad id) parameter: errors.rejected for a must-reject case, the SHOULD
    requirement the case names for a should-reject one."""
    bad = BAD[bad_id]
    requirement = bad.requirement if bad.expect == "should-reject" else "errors.rejected"
    assert requirement is not None, bad_id
    return pytest.param(requirement, bad_id, marks=pytest.mark.requirement(requirement), id=bad_id)


@pytest.mark.parametrize(
    ("requirement", "bad_id"), [rejection(bad_id) for bad_id in MUST_REJECT + SHOULD_REJECT]
)
def test_bad_request_is_rejected(
    expect: Expect, bad_answers: BadAnswers, requirement: str, bad_id: str
) -> None:
    bad = BAD[bad_id]
    exchange = bad_answers(bad)
    what = bad.why if bad.because is None else f"{bad.why}; rejecting it matters: {bad.because}"
    expect(requirement, status.check_rejected(exchange.status, what), exchange=exchange)


@pytest.mark.requirement("errors.no-5xx")
@pytest.mark.parametrize("bad_id", ARGUABLE + SHOULD_REJECT)
def test_arguable_request_never_crashes(
    expect: Expect, bad_answers: BadAnswers, bad_id: str
) -> None:
    exchange = bad_answers(BAD[bad_id])
    result = status.check_no_5xx(exchange.status, exchange.ok, BAD[bad_id].why)
    expect("errors.no-5xx", result, exchange=exchange)


@pytest.mark.requirement("errors.lenient-but-right")
@pytest.mark.parametrize("bad_id", STANDS_FOR)
def test_an_accepted_request_is_answered_like_the_one_it_stands_for(
    expect: Expect, client: EmbeddingsClient, bad_answers: BadAnswers, bad_id: str
) -> None:
    requirement = "errors.lenient-but-right"
    bad = BAD[bad_id]
    exchange = bad_answers(bad)
    if exchange.status != 200:
        pytest.skip(f"not applicable: refused with HTTP {exchange.status}, which is allowed")
    stands_for = bad.equivalent_document(client.model)
    try:
        valid = client.post(stands_for)
    except EndpointError as exc:
        expect(requirement, status.no_answer("an answer", str(exc)))
        return
    inputs = stands_for["input"]
    count = len(inputs) if isinstance(inputs, list) and isinstance(inputs[0], str) else 1
    ids = [f"{bad_id}[{i}]" for i in range(count)]
    want = expect.matrix(requirement, valid, ids)
    what = f"{bad.why}, accepted: vs the answer to {json.dumps(stands_for)[:120]}"
    expect.same_vectors(requirement, exchange, ids, want, what)


@pytest.mark.requirement("errors.envelope")
@pytest.mark.parametrize("bad_id", MUST_REJECT + SHOULD_REJECT)
def test_rejection_uses_the_error_envelope(
    expect: Expect, bad_answers: BadAnswers, bad_id: str
) -> None:
    exchange = bad_answers(BAD[bad_id])
    if not 400 <= exchange.status < 500:
        pytest.skip(f"answered HTTP {exchange.status}, not a rejection (see errors.rejected)")
    expect(
        "errors.envelope",
        errors.check_error_envelope(exchange.error_body, BAD[bad_id].why),
        exchange=exchange,
    )


@pytest.mark.requirement("errors.unknown-model")
def test_unknown_model_is_404_model_not_found(expect: Expect, bad_answers: BadAnswers) -> None:
    exchange = bad_answers(BAD["unknown-model"])
    if not 400 <= exchange.status < 500:
        pytest.skip(f"answered HTTP {exchange.status}: judged by the rejection check")
    expect(
        "errors.unknown-model",
        errors.check_unknown_model(exchange.status, exchange.error_body),
        exchange=exchange,
    )


@pytest.mark.requirement("errors.recovers")
@pytest.mark.parametrize("bad_id", list(BAD))
def test_server_recovers_after_bad_request(
    expect: Expect, client: EmbeddingsClient, answers: Answers, bad_id: str
) -> None:
    send_bad_request(client, BAD[bad_id])  # sent again: recovery must follow it directly
    exchange = answers.fresh("hello", encoding_format="float")
    what = f"a valid request right after bad request {bad_id!r}"
    result = status.check_embedded(exchange.status, exchange.ok, what)
    expect("errors.recovers", result, exchange=exchange)


@pytest.mark.requirement("errors.batch-limit")
def test_more_inputs_than_the_batch_limit(expect: Expect, client: EmbeddingsClient) -> None:
    """Judged on the status line alone: a server without a limit answers tens of MB (16.6 MiB
    at 384 dimensions), which is no fault of a MUST; only this SHOULD is at stake."""
    what = f"{OPENAI_BATCH_LIMIT + 1} inputs"
    document = {"model": client.model, "input": ["a"] * (OPENAI_BATCH_LIMIT + 1)}
    try:
        exchange = client.post_for_status(document, BATCH_LIMIT_TIMEOUT * client.timeout)
    except EndpointError as exc:
        expect("errors.batch-limit", status.no_answer("4xx", f"{what}: {exc}"))
        return
    result = status.check_rejected(exchange.status, what, large=True)  # 413 is a fine answer
    expect("errors.batch-limit", result, exchange=exchange)


@pytest.mark.requirement("input.over-context")
def test_input_past_the_context_is_truncated_or_rejected(
    expect: Expect, client: EmbeddingsClient, dim: int
) -> None:
    text = " ".join(["conformance"] * OVER_CONTEXT_WORDS)
    try:
        exchange = client.embed(text, encoding_format="float")
    except EndpointError as exc:  # a hang past the timeout, or a dropped connection
        expect("input.over-context", status.no_answer("4xx, or 200", str(exc)))
        return
    if status.is_refusal(exchange.status, large=True):
        expect.note("input.over-context", f"rejected with HTTP {exchange.status} (no truncation)")
        result = status.check_refusal_allowed(exchange.status, "200")
        expect("input.over-context", result, exchange=exchange)
        return
    batch = expect.ok("input.over-context", exchange)
    expect(
        "input.over-context",
        vectors.check_consistent_dimension(batch.vectors, dim),
        exchange=exchange,
    )
    expect("input.over-context", vectors.check_finite(batch.vectors), exchange=exchange)
