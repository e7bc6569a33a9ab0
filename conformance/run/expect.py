"""``expect``: record a check's verdict on the running test and fail it with a full explanation.

The verdict is on the one requirement the test's ``requirement`` marker names (the suite passes
no id); ``tests/suite/test_catalogue.py`` holds each test to the check the catalogue binds to it.

A MUST failure fails the test at once. A SHOULD failure is recorded and raised as a warning; the
test goes on and the run does not fail for it.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NoReturn

import numpy as np
import pytest

from conformance.checks import CheckResult
from conformance.checks.status import (
    check_embedded,
    declared_but_refused,
    is_refusal,
    not_a_refusal,
)
from conformance.checks.status import unmeasurable as check_unmeasurable
from conformance.client import Exchange
from conformance.requirements import BY_ID
from conformance.verdicts.capabilities import claims
from conformance.verdicts.records import CheckRecord
from conformance.verdicts.tally import CHECK_KEY, NOTE_KEY, SERIES_KEY, UNSUPPORTED_PREFIX
from conformance.wire import EmbeddingBatch, Matrix


class ConformanceWarning(UserWarning):
    """A SHOULD-level requirement is not met."""


def failure_message(
    requirement_id: str, result: CheckResult, exchange: Exchange | None, cases: Sequence[str] | None
) -> str:
    """Everything needed to understand a failure without reading the test."""
    requirement = BY_ID[requirement_id]
    lines = [f"[{requirement.level} {requirement_id}] {requirement.why}", f"  {result.describe()}"]
    if cases is not None and result.index is not None and result.index < len(cases):
        lines.append(f"  input: case {cases[result.index]!r} (index {result.index})")
    lines.append(f"  guards against: {requirement.guards}")
    if exchange is not None:
        lines.append(f"  response: {exchange.describe()[:300]}")
        lines.append(f"  reproduce: {exchange.curl()}")
    return "\n".join(lines)


def check_record(
    requirement_id: str,
    result: CheckResult,
    exchange: Exchange | None = None,
    cases: Sequence[str] | None = None,
) -> CheckRecord:
    """What the reports keep of one check: its result, the case it names and, on a failure,
    the transcript of the exchange behind it."""
    known = cases is not None and result.index is not None and result.index < len(cases)
    case = cases[result.index] if known else None  # type: ignore[index]
    record = CheckRecord.of(requirement_id, result, case)
    if not result.passed and exchange is not None:
        record = replace(record, response=exchange.describe()[:300], reproducer=exchange.curl())
    return record


class Expect:
    """Bound to one test item; call it once per check."""

    def __init__(
        self, item: pytest.Item, vector_atol: float, capabilities: Mapping[str, Any] | None = None
    ) -> None:
        self.item = item
        self.vector_atol = vector_atol  # the limit for answers that must carry the same vectors
        self.capabilities = capabilities or {}  # what the vendor declared (--capabilities)
        self.requirement_id = marked_requirement(item)

    def __call__(
        self,
        result: CheckResult,
        *,
        exchange: Exchange | None = None,
        cases: Sequence[str] | None = None,
    ) -> None:
        requirement_id = self.requirement_id
        record = check_record(requirement_id, result, exchange, cases)
        self.item.user_properties.append((CHECK_KEY, record.to_json()))  # plain data for xdist
        if result.passed:
            return
        message = failure_message(requirement_id, result, exchange, cases)
        if BY_ID[requirement_id].level == "SHOULD":
            warn(message)
        else:
            pytest.fail(message, pytrace=False)

    def note(self, text: str) -> None:
        """Say what could not be checked, and why; shown under 'notes' in the summary."""
        note = {"requirement": self.requirement_id, "text": text}
        self.item.user_properties.append((NOTE_KEY, note))

    def series(
        self,
        name: str,
        cases: Sequence[str],
        values: Sequence[float],
        limit: float | None = None,
    ) -> None:
        """Per-input measurements for the report's plots (``name``: 'norms' or 'agreement')."""
        points = [
            {"case": case, "value": float(value), "limit": limit}
            for case, value in zip(cases, values, strict=True)
        ]
        self.item.user_properties.append((SERIES_KEY, {"name": name, "points": points}))

    def ok(self, exchange: Exchange, cases: Sequence[str] | None = None) -> EmbeddingBatch:
        """The decoded envelope, or the end of the test: a response that is not a 200
        embeddings envelope fails the requirement (it cannot be measured)."""
        if exchange.batch is not None and exchange.status == 200:
            return exchange.batch
        result = check_embedded(
            exchange.status, False, exchange.problem or "no embeddings envelope"
        )
        self(result, exchange=exchange, cases=cases)
        pytest.skip(f"{self.requirement_id} could not be measured: {exchange.describe()[:200]}")

    def matrix(self, exchange: Exchange, cases: Sequence[str]) -> Matrix:
        """The answer's vectors as a [count, dim] matrix; when they cannot be stacked, the
        requirement is not measurable: it fails (the dimension requirements say why)."""
        batch = self.ok(exchange, cases)
        try:
            return batch.matrix()
        except ValueError as exc:
            self.unmeasurable(str(exc), exchange, cases, because=("dimension.*",))

    def rows(self, exchanges: Sequence[Exchange], cases: Sequence[str]) -> Matrix:
        """The first vector of each single-input answer, stacked as a [count, dim] matrix."""
        rows = [self.matrix(e, [c])[:1] for e, c in zip(exchanges, cases, strict=True)]
        try:
            return np.concatenate(rows)
        except ValueError as exc:
            self.unmeasurable(str(exc), exchanges[0], cases, because=("dimension.*",))

    def unmeasurable(
        self,
        reason: str,
        exchange: Exchange | None = None,
        cases: Sequence[str] | None = None,
        because: Sequence[str] = (),
    ) -> NoReturn:
        """End the test: the server's answer left the requirement unmeasurable. That is a
        failure (a MUST fails the test here; a SHOULD warns), never a quiet skip. ``because``:
        the requirements that judge what made it so (the failure follows from theirs)."""
        self(check_unmeasurable(reason, because), exchange=exchange, cases=cases)
        pytest.skip(f"{self.requirement_id} could not be measured: {reason}")

    def refused(self, exchange: Exchange, what: str, large: bool = False) -> None:
        """End the test as UNSUPPORTED when the server cleanly refused ``what`` (FAIL when
        --capabilities declares it); fail it when a 4xx says nothing about the request (401,
        429, a 413 for a small request); return when it was not refused at all."""
        if is_refusal(exchange.status, large):
            requirement_id = self.requirement_id
            promise = claims(dict(self.capabilities), requirement_id)
            if promise is not None:  # a declared feature may not be refused
                self(declared_but_refused(exchange.status, what, promise), exchange=exchange)
                refusal = f"{what} refused with HTTP {exchange.status}"
                pytest.skip(f"{requirement_id}: {refusal}")  # reached only for a SHOULD
            unsupported(f"{what} cleanly refused with HTTP {exchange.status}")
        reason = not_a_refusal(exchange.status)
        if reason is not None:
            self.unmeasurable(reason, exchange)


def marked_requirement(item: pytest.Item) -> str:
    """The one requirement id of the test's ``requirement`` marker: a test judges one
    requirement (one that covers two is two tests)."""
    ids = [i for marker in item.iter_markers("requirement") for i in marker.args]
    if len(ids) != 1:
        raise ValueError(f"{item.nodeid}: a requirement marker must name one id, not {ids}")
    return str(ids[0])


def warn(message: str) -> None:
    """Report a SHOULD finding as a warning, whatever the user's warning filters: under
    ``-W error`` or ``filterwarnings = error`` it would otherwise become an exception and turn
    a SHOULD into a failed test. pytest still records it for its warnings summary."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", ConformanceWarning)
        warnings.warn(ConformanceWarning(message), stacklevel=3)


def unsupported(reason: str) -> None:
    """End the test as UNSUPPORTED: the server cleanly declined an optional feature."""
    pytest.skip(UNSUPPORTED_PREFIX + reason)
