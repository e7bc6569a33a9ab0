"""The error contract: bad requests get a clean 4xx in OpenAI's envelope, and the server
keeps working after each one."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks import errors, status, vectors
from conformance.client import EmbeddingsClient, EndpointError
from conformance.corpus import load_bad_requests
from conformance.expect import Expect
from conformance.suite.pytest_fixtures import Answers, BadAnswers, send_bad_request

BAD = {bad.id: bad for bad in load_bad_requests()}
MUST_REJECT = [bad_id for bad_id, bad in BAD.items() if bad.expect == "reject"]
ARGUABLE = [bad_id for bad_id, bad in BAD.items() if bad.expect == "either"]
OPENAI_BATCH_LIMIT = 2048
OVER_CONTEXT_WORDS = 3000  # far past the usual 512-token (or 8k-character) contexts


def must_reject(requirement: str, bad_ids: list[str]) -> list[Any]:
    """(requirement, bad id) parameters, each marked with its requirement."""
    mark = pytest.mark.requirement(requirement)
    return [pytest.param(requirement, i, marks=mark, id=i) for i in bad_ids]


@pytest.mark.parametrize(
    ("requirement", "bad_id"),
    must_reject("errors.rejected", MUST_REJECT)
    + must_reject("input.empty-rejected", ["empty-string", "empty-string-in-array"]),
)
def test_bad_request_is_rejected(
    expect: Expect, bad_answers: BadAnswers, requirement: str, bad_id: str
) -> None:
    exchange = bad_answers(BAD[bad_id])
    result = status.check_rejected(exchange.status, BAD[bad_id].why)
    expect(requirement, result, exchange=exchange)


@pytest.mark.requirement("errors.no-5xx")
@pytest.mark.parametrize("bad_id", ARGUABLE)
def test_arguable_request_never_crashes(
    expect: Expect, bad_answers: BadAnswers, bad_id: str
) -> None:
    exchange = bad_answers(BAD[bad_id])
    result = status.check_no_5xx(exchange.status, exchange.ok, BAD[bad_id].why)
    expect("errors.no-5xx", result, exchange=exchange)


@pytest.mark.requirement("errors.envelope")
@pytest.mark.parametrize("bad_id", MUST_REJECT)
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


@pytest.mark.requirement("errors.batch-limit", "errors.no-5xx")
def test_more_inputs_than_the_batch_limit(expect: Expect, answers: Answers) -> None:
    exchange = answers.get(["a"] * (OPENAI_BATCH_LIMIT + 1), encoding_format="float")
    what = f"{OPENAI_BATCH_LIMIT + 1} inputs"
    expect(
        "errors.no-5xx", status.check_no_5xx(exchange.status, exchange.ok, what), exchange=exchange
    )
    expect("errors.batch-limit", status.check_rejected(exchange.status, what), exchange=exchange)


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
    if 400 <= exchange.status < 500:
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
