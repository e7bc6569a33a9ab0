"""Requirements judged on one answer at a time, bound once in a table.

Each rule names the check that judges a requirement (the catalogue says which requirement it
judges), the answers it is judged on (a shared batch, or one corpus case sent alone) and what
else the check needs. To add such a requirement: add it to the catalogue
(``conformance/requirements.py``) with its check, write the check in its family module
``conformance/checks/<family>.py`` with a unit test, and add one ``Rule`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from conformance.checks import CheckResult, dimension, envelope, finite, normalization
from conformance.checks import input as input_checks
from conformance.checks.result import Verdicts
from conformance.corpus import cases_tagged
from conformance.requirements import judged_by
from conformance.run.expect import Expect
from conformance.suite.pytest_fixtures import AnswerOf

# A check of one answer: the decoded batch, then the values of the rule's ``needs``.
Check = Callable[..., CheckResult | Verdicts]

BATCH = "batch"  # the 32-text float batch
BOTH = ("one-token", BATCH)  # a single string input, and a batch of strings
ODD = tuple(c.id for c in cases_tagged("odd"))  # a clean 4xx for these is UNSUPPORTED
INPUTS = "inputs"  # a need: the number of inputs the answer was asked for


@dataclass(frozen=True)
class Rule:
    check: Check
    answers: tuple[str, ...]  # BATCH, or core corpus case ids sent alone
    # INPUTS, or fixtures whose values follow the batch in each call (they skip the test when
    # the check does not apply)
    needs: tuple[str, ...] = ()

    @property
    def requirement(self) -> str:
        return judged_by(self.check)


RULES = (
    Rule(envelope.object_list, BOTH),
    Rule(envelope.one_item_per_input, BOTH, (INPUTS,)),
    Rule(envelope.item_shape, BOTH),
    Rule(envelope.index_order, BOTH),
    Rule(envelope.model_string, BOTH),
    Rule(envelope.embedding_number_array, BOTH),
    Rule(envelope.usage, BOTH),
    Rule(dimension.consistent, (BATCH,)),
    Rule(dimension.expected, (BATCH,), ("required_dim",)),
    Rule(finite.values, (BATCH, *ODD)),
    Rule(finite.nonzero, (BATCH, *ODD)),
    Rule(normalization.unit_norm, (BATCH, "one-token", "long-200"), ("norm_atol",)),
    Rule(input_checks.string, ("batch-02",), (INPUTS, "dim")),
    Rule(input_checks.string_array, (BATCH,), (INPUTS, "dim")),
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
    fixtures = {need: request.getfixturevalue(need) for need in rule.needs if need != INPUTS}
    exchange, ids = answer_of(answer)
    if answer in ODD:  # odd inputs may be refused; the ordinary ones must be served
        expect.refused(exchange, f"input {answer!r}")
    batch = expect.ok(exchange, ids)
    needed = [len(ids) if need == INPUTS else fixtures[need] for need in rule.needs]
    verdicts = rule.check(batch, *needed)
    for result in verdicts if isinstance(verdicts, tuple) else (verdicts,):
        expect(result, exchange=exchange, cases=ids)
