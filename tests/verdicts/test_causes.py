"""One cause, one FAIL: a failure that only says its cause failed follows from that cause's FAIL
when the cause failed in the same run at a level at least as strong; otherwise it stands alone."""

from __future__ import annotations

from conformance.checks.status import unmeasurable
from conformance.verdicts.causes import attribute_causes, names
from conformance.verdicts.records import CheckRecord
from conformance.verdicts.tally import Tally

HONOURED, DECODES, PARITY = "base64.honoured", "base64.decodes", "base64.float-parity"
MONOTONIC = "usage.monotonic-length"  # a SHOULD


def run(*tests: tuple[str, list[CheckRecord], str]) -> Tally:
    """A tally of tests, each (requirement, its checks, its outcome), causes attributed."""
    tally = Tally()
    for requirement, checks, outcome in tests:
        properties = [
            ("conformance.requirements", [requirement]),
            *(("conformance.check", check.to_json()) for check in checks),
        ]
        tally.add(f"test_{requirement}", properties, outcome)
    attribute_causes(tally)
    return tally


def failed(requirement: str, because: tuple[str, ...] = ()) -> CheckRecord:
    return CheckRecord.of(requirement, unmeasurable("no base64 here", because))


def passed(requirement: str) -> CheckRecord:
    return CheckRecord(requirement, True, 0, "== 0", 0.0, "fine")


def test_a_failure_that_names_a_failed_cause_follows_from_it() -> None:
    tally = run(
        (HONOURED, [failed(HONOURED)], "failed"),
        (DECODES, [failed(DECODES, (HONOURED,))], "failed"),
        (PARITY, [failed(PARITY, (HONOURED, DECODES))], "failed"),
    )
    assert tally.verdicts[HONOURED].follows_from == ()
    assert tally.verdicts[DECODES].follows_from == (HONOURED,)
    assert tally.verdicts[PARITY].follows_from == (HONOURED, DECODES)
    assert tally.counts()["failed"] == 3  # each stays FAIL: the run fails closed


def test_a_cause_that_passed_leaves_the_failure_standing_alone() -> None:
    tally = run(
        (HONOURED, [passed(HONOURED)], "passed"),
        (DECODES, [failed(DECODES, (HONOURED,))], "failed"),
    )
    assert tally.verdicts[DECODES].follows_from == ()


def test_one_failure_of_its_own_is_enough_to_stand_alone() -> None:
    own = CheckRecord(DECODES, False, 2, "== 0", -2.0, "2 vectors decode to NaN")
    tally = run(
        (HONOURED, [failed(HONOURED)], "failed"),
        (DECODES, [failed(DECODES, (HONOURED,)), own], "failed"),
    )
    assert tally.verdicts[DECODES].follows_from == ()


def test_a_failed_test_outside_any_check_stands_alone() -> None:
    tally = run((HONOURED, [failed(HONOURED)], "failed"), (DECODES, [], "failed"))
    assert tally.verdicts[DECODES].follows_from == ()


def test_a_should_warning_does_not_explain_a_must_failure() -> None:
    tally = run(
        (MONOTONIC, [failed(MONOTONIC)], "failed"),
        (DECODES, [failed(DECODES, (MONOTONIC,))], "failed"),
    )
    assert tally.verdicts[DECODES].follows_from == ()


def test_a_must_failure_explains_a_should_warning() -> None:
    usage = "envelope.usage"
    tally = run(
        (usage, [failed(usage)], "failed"),
        (MONOTONIC, [failed(MONOTONIC, (usage,))], "failed"),
    )
    assert tally.verdicts[MONOTONIC].follows_from == (usage,)


def test_an_area_pattern_names_every_requirement_of_the_area() -> None:
    assert names("dimension.*", "dimension.fixed-across-lengths")
    assert not names("dimension.*", "dimensions.honoured")
    assert names(HONOURED, HONOURED) and not names(HONOURED, DECODES)


def test_the_cause_travels_through_the_records() -> None:
    record = failed(DECODES, (HONOURED,))
    assert record.detail == "no base64 here (see base64.honoured)"
    assert CheckRecord.from_json(record.to_json()) == record
    assert "follows_from" not in failed(HONOURED).to_json()
