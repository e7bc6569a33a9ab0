"""Requirements judged on one answer at a time, bound once in a table.

Each rule names a requirement, the answers it is judged on (a shared batch, or one corpus case
sent alone) and the pure checks that judge each answer. To add such a requirement: add it to
the catalogue (``conformance/requirements.py``), write its check in ``conformance/checks/``
with a unit test, and add one ``Rule`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.checks import CheckResult, encoding, envelope, vectors
from conformance.corpus import cases_tagged
from conformance.expect import Expect
from conformance.suite.pytest_fixtures import AnswerOf
from conformance.wire import EmbeddingBatch

# A check of one answer: the decoded batch, the number of inputs sent, then the values of the
# rule's ``needs`` fixtures (they skip the test when the check does not apply).
Check = Callable[..., CheckResult]

BATCH = "batch"  # the 32-text float batch
BATCH_BASE64 = "batch-base64"  # the same texts with encoding_format=base64
BOTH = ("one-token", BATCH)  # a single string input, and a batch of strings
ODD = tuple(c.id for c in cases_tagged("odd"))  # a clean 4xx for these is UNSUPPORTED


@dataclass(frozen=True)
class Rule:
    requirement: str
    answers: tuple[str, ...]  # BATCH, BATCH_BASE64, or core corpus case ids sent alone
    checks: tuple[Check, ...]
    needs: tuple[str, ...] = ()  # fixtures whose values follow (batch, inputs) in each check


def _one(check: Callable[[EmbeddingBatch], CheckResult]) -> tuple[Check, ...]:
    return (lambda batch, inputs, *_: check(batch),)


def _consistent(batch: EmbeddingBatch, inputs: int, dim: int) -> CheckResult:
    return vectors.check_consistent_dimension(batch.vectors, dim)


def _count(batch: EmbeddingBatch, inputs: int, *_: Any) -> CheckResult:
    return envelope.check_item_count(batch, inputs)


RULES = (
    Rule("envelope.object-list", BOTH, _one(envelope.check_object_list)),
    Rule("envelope.one-item-per-input", BOTH, (_count,)),
    Rule("envelope.item-shape", BOTH, _one(envelope.check_item_shape)),
    Rule("envelope.index-order", BOTH, _one(envelope.check_index_order)),
    Rule("envelope.model-string", BOTH, _one(envelope.check_model_string)),
    Rule("envelope.embedding-number-array", BOTH, _one(envelope.check_number_arrays)),
    Rule("envelope.usage", BOTH, _one(envelope.check_usage)),
    Rule(
        "dimension.consistent",
        (BATCH,),
        _one(lambda batch: vectors.check_consistent_dimension(batch.vectors)),
    ),
    Rule(
        "dimension.expected",
        (BATCH,),
        (lambda batch, inputs, d: vectors.check_expected_dimension(batch.vectors, d),),
        needs=("required_dim",),
    ),
    Rule("finite.values", (BATCH, *ODD), _one(lambda batch: vectors.check_finite(batch.vectors))),
    Rule("finite.nonzero", (BATCH, *ODD), _one(lambda batch: vectors.check_nonzero(batch.vectors))),
    Rule(
        "normalization.unit-norm",
        (BATCH, "one-token", "long-200"),
        (lambda batch, inputs, atol: vectors.check_unit_norm(batch.vectors, atol),),
        needs=("norm_atol",),
    ),
    Rule("base64.honoured", (BATCH_BASE64,), _one(encoding.check_base64_honoured)),
    Rule("input.string", ("batch-02",), (_count, _consistent), needs=("dim",)),
    Rule("input.string-array", (BATCH,), (_count, _consistent), needs=("dim",)),
)


@pytest.mark.parametrize(
    ("rule", "answer"),
    [
        pytest.param(
            rule,
            answer,
            id=f"{rule.requirement}:{answer}",
            marks=pytest.mark.requirement(rule.requirement),
        )
        for rule in RULES
        for answer in rule.answers
    ],
)
def test_answer(
    request: pytest.FixtureRequest, expect: Expect, answer_of: AnswerOf, rule: Rule, answer: str
) -> None:
    needed = [request.getfixturevalue(name) for name in rule.needs]
    exchange, ids = answer_of(answer)
    if answer in ODD:  # odd inputs may be refused; the ordinary ones must be served
        expect.refused(rule.requirement, exchange, f"input {answer!r}")
    batch = expect.ok(rule.requirement, exchange, ids)
    for check in rule.checks:
        result = check(batch, len(ids), *needed)
        expect(rule.requirement, result, exchange=exchange, cases=ids)
