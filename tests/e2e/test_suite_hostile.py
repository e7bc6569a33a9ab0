"""The whole suite against hostile servers: FAILs with clear messages, no crash, no hang."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.suite_runner import run_suite

# behaviour -> what the failure output must say
HOSTILE = {
    "trickle": "no complete answer within 2 s",
    "huge": "larger than 8 MB (--max-response-mb)",
    "close-mid-body": "the answer broke off",
    "truncated-body": "the answer broke off",
    "nan-literals": "NaN literal: RFC 8259 JSON has no NaN or Infinity",
    "redirect-loop": "HTTP 302",
    "html-error": "HTTP 502 text/html",
    "invalid-json": "body is not valid JSON",
}


@pytest.mark.parametrize("behaviour", sorted(HOSTILE))
def test_hostile_server_gives_fails_not_crashes(
    hostile_server: str, tmp_path: Path, behaviour: str
) -> None:
    started = time.monotonic()
    run = run_suite(
        tmp_path,
        "--endpoint",
        f"{hostile_server}/{behaviour}",
        "--conformance-profile",
        "core",
        "--request-timeout",
        "2",
        "--max-response-mb",
        "8",
        "--reference",
        "none",  # its vectors are made up: identifying them would stop the run at the start
    )
    assert run.returncode == 1, run.output
    assert HOSTILE[behaviour] in run.output
    assert "INTERNALERROR" not in run.output and "Traceback" not in run.output
    assert "conformance: " in run.output  # the summary still comes out
    assert time.monotonic() - started < 60


def test_a_huge_answer_to_the_batch_limit_probe_fails_no_must(
    hostile_server: str, tmp_path: Path
) -> None:
    """A server without a batch limit answers the 2,049-input probe in full (~66 MiB at 1536
    dimensions; 400 MB here): the SHOULD errors.batch-limit is judged on the status line, and
    the size cap that guards every other answer turns nothing into a MUST failure."""
    run = run_suite(
        tmp_path,
        "--endpoint",
        f"{hostile_server}/huge",
        "-k",
        "batch_limit",
        "--max-response-mb",
        "8",
        "--reference",
        "none",
    )
    assert run.returncode == 0, run.output
    assert run.status("errors.batch-limit") == "FAIL"  # a SHOULD: a warning
    assert "measured HTTP 200 vs allowed 4xx" in run.output
    assert run.status("errors.no-5xx") == "NOT RUN"
    assert "(1 SHOULD warning)" in run.output


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("unauthorized", "HTTP 401: authentication failed mid-run, not a refusal"),
        ("always-429", "HTTP 429: rate limited, still after retries, not a refusal"),
    ],
)
def test_a_4xx_that_judges_no_request_is_never_a_refusal(
    hostile_server: str, tmp_path: Path, behaviour: str, reason: str
) -> None:
    """A key revoked mid-run, or a rate limit that outlasts the retries, must not turn odd
    inputs into UNSUPPORTED (a clean refusal) and a requirement into a pass."""
    run = run_suite(
        tmp_path,
        "--endpoint",
        f"{hostile_server}/{behaviour}",
        "-k",
        "token_id",
        "--reference",
        "none",
    )
    assert run.returncode == 1, run.output
    assert run.status("input.token-ids") == "FAIL"  # not UNSUPPORTED: nothing was refused
    assert run.status("input.token-id-arrays") == "FAIL"
    assert reason in run.output
    assert "0 unsupported" in run.output
