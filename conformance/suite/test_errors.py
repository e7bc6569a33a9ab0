"""The error contract: bad requests get a clean 4xx in OpenAI's envelope, and the server
keeps working after each one."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from conformance.checks import errors, status
from conformance.checks import input as input_checks
from conformance.checks.result import CheckResult
from conformance.client import EmbeddingsClient, EndpointError, Exchange
from conformance.client.http import RETRIED
from conformance.corpus import BadRequest, load_bad_requests
from conformance.requirements import judged_by
from conformance.run.expect import Expect
from conformance.suite.pytest_fixtures import Answers, BadAnswers, send_bad_request

BAD = {bad.id: bad for bad in load_bad_requests()}
MUST_REJECT = [bad_id for bad_id, bad in BAD.items() if bad.expect == "reject"]
SHOULD_REJECT = [bad_id for bad_id, bad in BAD.items() if bad.expect == "should-reject"]
ARGUABLE = [bad_id for bad_id, bad in BAD.items() if bad.expect == "either"]
STANDS_FOR = [bad_id for bad_id, bad in BAD.items() if bad.equivalent is not None]
OPENAI_BATCH_LIMIT = 2048
BATCH_LIMIT_TIMEOUT = 5  # times --request-timeout: a slow server computes 2,049 vectors first
OVER_CONTEXT_WORDS = 3000  # far past the usual 512-token (or 8k-character) contexts


def should_reject(check: Callable[..., CheckResult]) -> list[str]:
    """The should-reject bad requests that the fixture says ``check``'s requirement covers."""
    requirement = judged_by(check)
    return [bad_id for bad_id in SHOULD_REJECT if BAD[bad_id].requirement == requirement]


BadAnswer = tuple[BadRequest, Exchange]


@pytest.fixture
def bad_answer(request: pytest.FixtureRequest, bad_answers: BadAnswers) -> BadAnswer:
    """The bad request the test is parametrized with (by id), and the endpoint's answer."""
    bad = BAD[request.param]
    return bad, bad_answers(bad)


def rejection_reason(bad: BadRequest) -> str:
    return bad.why if bad.because is None else f"{bad.why}; rejecting it matters: {bad.because}"


# The checks of the requirements that bad requests judged on their status alone fall under:
# errors.rejected for a must-reject request, the SHOULD one the fixture names for the others.
REJECTION_CHECKS = (
    errors.rejected,
    input_checks.empty_rejected,
    errors.content_type,
    errors.unknown_value_rejected,
)


def rejections() -> list[Any]:
    """(check, bad id) parameters, each marked with the requirement its check judges."""
    return [
        pytest.param(check, bad_id, marks=pytest.mark.requirement(judged_by(check)), id=bad_id)
        for check in REJECTION_CHECKS
        for bad_id in (MUST_REJECT if check is errors.rejected else should_reject(check))
    ]


@pytest.mark.parametrize(("check", "bad_answer"), rejections(), indirect=["bad_answer"])
def test_bad_request_is_rejected(
    expect: Expect, check: Callable[[int, str], CheckResult], bad_answer: BadAnswer
) -> None:
    bad, exchange = bad_answer
    expect(check(exchange.status, rejection_reason(bad)), exchange=exchange)


@pytest.mark.requirement("errors.unknown-model")
@pytest.mark.parametrize("bad_answer", should_reject(errors.unknown_model), indirect=True)
def test_unknown_model_is_404_model_not_found(expect: Expect, bad_answer: BadAnswer) -> None:
    bad, exchange = bad_answer
    result = errors.unknown_model(exchange.status, exchange.error_body, rejection_reason(bad))
    expect(result, exchange=exchange)


@pytest.mark.requirement("errors.no-5xx")
@pytest.mark.parametrize("bad_answer", ARGUABLE + SHOULD_REJECT, indirect=True)
def test_arguable_request_never_crashes(expect: Expect, bad_answer: BadAnswer) -> None:
    bad, exchange = bad_answer
    expect(errors.no_5xx(exchange.status, exchange.ok, bad.why), exchange=exchange)


@pytest.mark.requirement("errors.lenient-but-right")
@pytest.mark.parametrize("bad_answer", STANDS_FOR, indirect=True)
def test_an_accepted_request_is_answered_like_the_one_it_stands_for(
    expect: Expect, client: EmbeddingsClient, bad_answer: BadAnswer
) -> None:
    bad, exchange = bad_answer
    if exchange.status != 200:
        pytest.skip(f"not applicable: refused with HTTP {exchange.status}, which is allowed")
    stands_for = bad.equivalent_document(client.model)
    try:
        valid = client.post(stands_for)
    except EndpointError as exc:
        expect(status.no_answer("an answer", str(exc)))
        return
    inputs = stands_for["input"]
    count = len(inputs) if isinstance(inputs, list) and isinstance(inputs[0], str) else 1
    ids = [f"{bad.id}[{i}]" for i in range(count)]
    want = expect.matrix(valid, ids)
    what = f"{bad.why}, accepted: vs the answer to {json.dumps(stands_for)[:120]}"
    result = errors.lenient_but_right(
        expect.matrix(exchange, ids),
        want,
        expect.vector_atol,
        what,
        accepted_encoding=errors.wire_encoding(expect.ok(exchange, ids)),
        stands_for_encoding=errors.wire_encoding(expect.ok(valid, ids)),
    )
    expect(result, exchange=exchange, cases=ids)


@pytest.mark.requirement("errors.envelope")
@pytest.mark.parametrize("bad_answer", MUST_REJECT + SHOULD_REJECT, indirect=True)
def test_rejection_uses_the_error_envelope(expect: Expect, bad_answer: BadAnswer) -> None:
    bad, exchange = bad_answer
    if not 400 <= exchange.status < 500:
        pytest.skip(f"answered HTTP {exchange.status}, not a rejection (see errors.rejected)")
    expect(errors.envelope(exchange.error_body, bad.why), exchange=exchange)


@pytest.mark.requirement("errors.recovers")
@pytest.mark.parametrize("bad_id", list(BAD))
def test_server_recovers_after_bad_request(
    expect: Expect, client: EmbeddingsClient, answers: Answers, bad_id: str
) -> None:
    send_bad_request(client, BAD[bad_id])  # sent again: recovery must follow it directly
    # Judged as it first comes back: a client's retries would hide a server that answers 503
    # to the requests after a rejected one (the OpenAI SDK gives up after two).
    exchange = answers.fresh("hello", encoding_format="float", retry=False)
    what = f"a valid request right after bad request {bad_id!r}, not retried"
    retries, retried_status = None, None
    if exchange.status in RETRIED:  # what a client that retries would have gone through
        again = answers.fresh("hello", encoding_format="float")
        retries, retried_status = again.retries, again.status
    result = errors.recovers(exchange.status, exchange.ok, what, retries, retried_status)
    expect(result, exchange=exchange)


@pytest.mark.requirement("errors.batch-limit")
def test_more_inputs_than_the_batch_limit(expect: Expect, client: EmbeddingsClient) -> None:
    """Judged on the status line alone: a server without a limit answers tens of MB (16.6 MiB
    at 384 dimensions), which is no fault of a MUST; only this SHOULD is at stake."""
    what = f"{OPENAI_BATCH_LIMIT + 1} inputs"
    document = {"model": client.model, "input": ["a"] * (OPENAI_BATCH_LIMIT + 1)}
    try:
        exchange = client.post_for_status(document, BATCH_LIMIT_TIMEOUT * client.timeout)
    except EndpointError as exc:
        expect(status.no_answer("4xx", f"{what}: {exc}"))
        return
    expect(errors.batch_limit(exchange.status, what), exchange=exchange)  # 413 is a fine answer


@pytest.mark.requirement("input.over-context")
def test_input_past_the_context_is_truncated_or_rejected(
    expect: Expect, client: EmbeddingsClient, dim: int
) -> None:
    text = " ".join(["conformance"] * OVER_CONTEXT_WORDS)
    try:
        exchange = client.embed(text, encoding_format="float")
    except EndpointError as exc:  # a hang past the timeout, or a dropped connection
        expect(status.no_answer("4xx, or 200", str(exc)))
        return
    refused = status.is_refusal(exchange.status, large=True)
    if refused:
        expect.note(f"rejected with HTTP {exchange.status} (no truncation)")
    batch = None if refused else expect.ok(exchange)
    for result in input_checks.over_context(exchange.status, batch, dim):
        expect(result, exchange=exchange)
