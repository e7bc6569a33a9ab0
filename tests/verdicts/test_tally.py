"""From test outcomes and check records to per-requirement verdicts and summaries."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

import numpy as np

from conformance.checks.result import CheckResult, at_most, equals, no_offenders
from conformance.checks.vectors import check_unit_norm
from conformance.reporting.document import build_document
from conformance.reporting.terminal import (
    final_line,
    note_lines,
    requests_line,
    requirement_lines,
    results_document,
    retry_lines,
    summary_lines,
)
from conformance.requirements import CATALOGUE
from conformance.verdicts.records import CheckRecord
from conformance.verdicts.tally import (
    CHECK_KEY,
    REQUESTS_KEY,
    REQUIREMENTS_KEY,
    RETRIES_KEY,
    Tally,
    Verdict,
    statuses_for_test,
)
from conformance.wire import RequestCount

NORM = "normalization.unit-norm"
FINITE = "finite.values"
NONZERO = "finite.nonzero"
MONOTONIC = "usage.monotonic-length"  # the SHOULD requirement


def record(requirement: str, result: CheckResult) -> dict[str, Any]:
    """A check record as ``expect`` stores it in ``user_properties``."""
    return {"requirement": requirement, **asdict(result), "case": None}


def passing(requirement: str, margin: float = 0.5) -> dict[str, Any]:
    return record(requirement, at_most(1.0 - margin, 1.0, "ok"))


def failing(requirement: str, margin: float = -1.0) -> dict[str, Any]:
    return record(requirement, at_most(1.0 - margin, 1.0, "too far", 0))


def typed(*checks: dict[str, Any]) -> list[CheckRecord]:
    """Records as the tally reads them off the wire."""
    return [CheckRecord.from_json(check) for check in checks]


def properties(requirements: list[str], *checks: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(REQUIREMENTS_KEY, requirements), *((CHECK_KEY, c) for c in checks)]


# statuses_for_test


def test_passed_test_passes_its_requirements() -> None:
    statuses = statuses_for_test([NORM, FINITE], typed(passing(NORM)), "passed")
    assert statuses == {NORM: "PASS", FINITE: "PASS"}


def test_failing_check_fails_its_requirement() -> None:
    statuses = statuses_for_test([NORM], typed(failing(NORM)), "failed")
    assert statuses == {NORM: "FAIL"}


def test_failed_test_without_a_failing_check_fails_every_requirement() -> None:
    statuses = statuses_for_test([NORM, FINITE], typed(passing(NORM)), "failed")
    assert statuses == {NORM: "FAIL", FINITE: "FAIL"}


def test_explained_failure_leaves_other_requirements_their_own_status() -> None:
    checks = typed(passing(FINITE), failing(NORM))
    statuses = statuses_for_test([FINITE, NORM, NONZERO], checks, "failed")
    assert statuses == {FINITE: "PASS", NORM: "FAIL", NONZERO: "SKIPPED"}


def test_passed_test_with_a_failing_should_check_fails_that_requirement() -> None:
    statuses = statuses_for_test([MONOTONIC], typed(failing(MONOTONIC)), "passed")
    assert statuses == {MONOTONIC: "FAIL"}


def test_skipped_test_skips_its_requirements() -> None:
    statuses = statuses_for_test([NORM, FINITE], [], "skipped", "no --expect-dim given")
    assert statuses == {NORM: "SKIPPED", FINITE: "SKIPPED"}


def test_unsupported_skip_reason_gives_unsupported() -> None:
    reason = "unsupported: the server rejected input 'empty' with HTTP 400"
    statuses = statuses_for_test([FINITE], [], "skipped", reason)
    assert statuses == {FINITE: "UNSUPPORTED"}


def test_unsupported_prefix_must_start_the_reason() -> None:
    statuses = statuses_for_test([FINITE], [], "skipped", "skipped: unsupported: x")
    assert statuses == {FINITE: "SKIPPED"}


def test_failure_recorded_before_a_skip_is_not_hidden() -> None:
    statuses = statuses_for_test(
        [NORM, FINITE], typed(failing(NORM)), "skipped", "could not be measured"
    )
    assert statuses == {NORM: "FAIL", FINITE: "SKIPPED"}


def test_failure_recorded_before_an_unsupported_skip_is_not_hidden() -> None:
    statuses = statuses_for_test([NORM], typed(failing(NORM)), "skipped", "unsupported: nope")
    assert statuses == {NORM: "FAIL"}


# Tally.add: precedence across tests


def status_after(*outcomes: tuple[str, str]) -> str:
    """The NORM verdict after one test per (outcome, skip reason)."""
    tally = Tally()
    for number, (outcome, reason) in enumerate(outcomes):
        checks = [failing(NORM)] if outcome == "failed" else []
        tally.add(f"t{number}", properties([NORM], *checks), outcome, reason)
    return tally.verdicts[NORM].status


def test_requirement_not_run_until_a_test_reports() -> None:
    assert Tally().verdicts[NORM].status == "NOT RUN"
    assert not Tally().ran_anything


def test_fail_beats_pass_in_either_order() -> None:
    assert status_after(("passed", ""), ("failed", "")) == "FAIL"
    assert status_after(("failed", ""), ("passed", "")) == "FAIL"


def test_pass_beats_unsupported_and_skipped() -> None:
    assert status_after(("skipped", "unsupported: x"), ("passed", "")) == "PASS"
    assert status_after(("passed", ""), ("skipped", "no dim")) == "PASS"


def test_unsupported_beats_skipped() -> None:
    assert status_after(("skipped", "no dim"), ("skipped", "unsupported: x")) == "UNSUPPORTED"
    assert status_after(("skipped", "unsupported: x"), ("skipped", "no dim")) == "UNSUPPORTED"


def test_add_counts_tests_and_collects_failures_per_requirement() -> None:
    tally = Tally()
    tally.add("t::a", properties([NORM, FINITE], passing(FINITE), failing(NORM)), "failed")
    tally.add("t::b", properties([NORM], passing(NORM)), "passed")
    norm, finite = tally.verdicts[NORM], tally.verdicts[FINITE]
    assert (norm.status, norm.tests) == ("FAIL", 2)
    assert (finite.status, finite.tests) == ("PASS", 1)
    assert norm.failures == ["t::a: too far"]
    assert finite.failures == []
    assert tally.ran_anything


def test_unsupported_sub_results_are_listed_under_a_pass() -> None:
    """A server that refused Arabic and emoji but embedded the rest: PASS, and it says so."""
    tally = Tally()
    tally.add("t.py::test[finite.values:batch]", properties([FINITE], passing(FINITE)), "passed")
    for case in ("ar-01", "emoji-02"):
        tally.add(
            f"t.py::test[finite.values:{case}]", properties([FINITE]), "skipped", "unsupported: x"
        )
    assert tally.verdicts[FINITE].status == "PASS"
    assert note_lines(tally) == [
        "finite.values: PASS, but 2 of its 3 tests UNSUPPORTED (cleanly refused): "
        "test[finite.values:ar-01], test[finite.values:emoji-02]"
    ]


def test_add_without_a_requirements_property_records_nothing() -> None:
    tally = Tally()
    tally.add("t::plain", [], "passed")
    assert not tally.ran_anything


# Verdict.worst


def test_worst_is_the_check_with_the_smallest_margin() -> None:
    verdict = Verdict()
    verdict = verdict.merge(
        "PASS", typed(passing(NORM, 0.5), passing(NORM, 0.125), passing(NORM, 0.25)), "t"
    )
    assert verdict.worst is not None
    assert verdict.worst.margin == 0.125


def test_a_failing_check_is_worse_than_any_passing_one() -> None:
    verdict = Verdict()
    verdict = verdict.merge("PASS", typed(passing(NORM, 0.001)), "t1")
    fail = record(NORM, equals(3, 4, "count"))  # margin None
    verdict = verdict.merge("FAIL", typed(fail), "t2")
    verdict = verdict.merge("PASS", typed(passing(NORM, 0.0)), "t3")
    assert verdict.worst == CheckRecord.from_json(fail).in_test("t2")


def test_worst_failing_check_is_the_most_negative_margin() -> None:
    verdict = Verdict()
    verdict = verdict.merge(
        "FAIL", typed(failing(NORM, -0.5), failing(NORM, -4.0), failing(NORM, -1.0)), "t"
    )
    assert verdict.worst is not None
    assert verdict.worst.margin == -4.0


def test_numeric_margin_replaces_a_missing_one() -> None:
    verdict = Verdict()
    verdict = verdict.merge("FAIL", typed(record(NORM, equals(1, 2, "x"))), "t")
    verdict = verdict.merge("FAIL", typed(record(NORM, no_offenders([0], 1, "bad", "e"))), "t")
    assert verdict.worst is not None
    assert verdict.worst.margin == -1.0


def test_worst_is_a_copy_of_the_record() -> None:
    check = failing(NORM)
    verdict = Verdict()
    verdict = verdict.merge("FAIL", typed(check), "t")
    check["margin"] = 99.0
    assert verdict.worst is not None and verdict.worst.margin == -1.0


# Tally.counts


def test_counts_of_an_empty_run_are_all_not_run() -> None:
    assert Tally().counts() == {
        "passed": 0,
        "failed": 0,
        "warnings": 0,
        "unsupported": 0,
        "not_applicable": 0,
        "not_run": len(CATALOGUE),
        "xfail": 0,
        "stale": 0,
    }


def test_a_skipped_requirement_is_not_applicable_not_unrun() -> None:
    tally = Tally()
    tally.add("t::norm", properties([NORM]), "skipped", "not normalized")
    assert tally.counts()["not_applicable"] == 1
    assert tally.counts()["not_run"] == len(CATALOGUE) - 1


def test_should_failure_counts_as_a_warning_not_a_failure() -> None:
    tally = Tally()
    tally.add("t::mono", properties([MONOTONIC], failing(MONOTONIC)), "passed")
    tally.add("t::norm", properties([NORM], failing(NORM)), "failed")
    tally.add("t::finite", properties([FINITE], passing(FINITE)), "passed")
    tally.add("t::nonzero", properties([NONZERO]), "skipped", "unsupported: declined")
    assert tally.counts() == {
        "passed": 1,
        "failed": 1,
        "warnings": 1,
        "unsupported": 1,
        "not_applicable": 0,
        "not_run": len(CATALOGUE) - 4,
        "xfail": 0,
        "stale": 0,
    }


# summary


def sample_tally() -> Tally:
    tally = Tally()
    tally.add("t::norm", properties([NORM], failing(NORM, -4.0)), "failed")
    tally.add("t::finite", properties([FINITE], passing(FINITE, 0.0)), "passed")
    tally.add("t::mono", properties([MONOTONIC], failing(MONOTONIC)), "passed")
    tally.add("t::nonzero", properties([NONZERO]), "skipped", "unsupported: declined")
    return tally


def test_final_line_counts_every_status() -> None:
    not_run = len(CATALOGUE) - 4
    assert final_line(sample_tally()) == (
        f"conformance: 1 passed, 1 failed, 1 unsupported, 0 not applicable, {not_run} not run "
        "(1 SHOULD warning)"
    )


def test_final_line_without_warnings_has_no_suffix() -> None:
    tally = Tally()
    tally.add("t::finite", properties([FINITE], passing(FINITE)), "passed")
    assert final_line(tally) == (
        "conformance: 1 passed, 0 failed, 0 unsupported, 0 not applicable, "
        f"{len(CATALOGUE) - 1} not run"
    )


def test_requirement_lines_give_one_line_per_requirement_in_catalogue_order() -> None:
    lines = requirement_lines(sample_tally())
    assert len(lines) == len(CATALOGUE)
    for line, requirement in zip(lines, CATALOGUE, strict=True):
        assert requirement.id in line
        assert requirement.level in line


def test_requirement_lines_show_status_and_worst_measurement() -> None:
    lines = {line.split()[2]: line for line in requirement_lines(sample_tally())}
    assert lines[NORM].startswith("FAIL ")
    assert lines[NORM].endswith("measured 5 vs <= 1 (margin -4)")
    assert lines[FINITE].startswith("PASS ")
    assert lines[FINITE].endswith("measured 1 vs <= 1 (margin 0)")
    assert lines[NONZERO].startswith("UNSUPPORTED ")
    assert lines[MONOTONIC].split()[:2] == ["FAIL", "SHOULD"]


def test_requirement_lines_show_not_run_apart_from_not_applicable() -> None:
    tally = sample_tally()
    tally.add("t::dim", properties(["dimension.expected"]), "skipped", "no --expect-dim given")
    lines = requirement_lines(tally)

    def line_of(requirement_id: str) -> str:
        return next(line for line in lines if f" {requirement_id} " in f"{line} ")

    assert line_of("batch.permutation").split() == (
        [
            "NOT",
            "RUN",
            "MUST",
            "batch.permutation",
            "deselected",
            "(-k,",
            "-m",
            "or",
            "--requirements)",
        ]
    )
    assert line_of("dimension.expected").split()[:3] == ["N/A", "MUST", "dimension.expected"]
    assert line_of("dimension.expected").endswith("no --expect-dim given")


def test_results_document_is_json_serializable_and_complete() -> None:
    header = {"endpoint": "http://h/v1/embeddings", "model": "m", "version": "0"}
    document = results_document(sample_tally(), header)
    parsed = json.loads(json.dumps(document))
    assert parsed["endpoint"] == "http://h/v1/embeddings"
    assert parsed["counts"]["failed"] == 1
    assert [r["id"] for r in parsed["requirements"]] == [r.id for r in CATALOGUE]
    by_id = {r["id"]: r for r in parsed["requirements"]}
    assert by_id[NORM]["status"] == "FAIL"
    assert by_id[NORM]["level"] == "MUST"
    assert by_id[NORM]["tests"] == 1
    assert by_id[NORM]["worst"]["margin"] == -4.0
    assert by_id[NORM]["failures"] == ["t::norm: too far"]
    assert by_id["batch.permutation"]["status"] == "NOT RUN"
    assert by_id["batch.permutation"]["worst"] is None


def test_results_document_holds_real_check_results() -> None:
    vectors = [np.array([0.6, 0.8]), np.array([3.0, 4.0])]
    tally = Tally()
    tally.add("t::norm", properties([NORM], record(NORM, check_unit_norm(vectors, 1e-3))), "failed")
    parsed = json.loads(json.dumps(results_document(tally, {})))
    worst = parsed["requirements"][[r.id for r in CATALOGUE].index(NORM)]["worst"]
    assert worst["index"] == 1
    assert math.isclose(worst["measured"], 4.0)


def test_results_document_is_strict_json_for_a_nan_vector() -> None:
    vectors = [np.array([0.6, 0.8]), np.array([math.nan, 1.0])]
    tally = Tally()
    tally.add("t::norm", properties([NORM], record(NORM, check_unit_norm(vectors, 1e-3))), "failed")
    json.dumps(results_document(tally, {}), allow_nan=False)


# --- retried requests (issue 28) ---------------------------------------------------------------

RECOVERS = "errors.recovers"


def test_retried_requests_are_counted_under_the_tests_requirement() -> None:
    tally = Tally()
    tally.add("t::recovers", properties([RECOVERS], failing(RECOVERS)), "failed")
    teardown = [(REQUIREMENTS_KEY, [RECOVERS]), (RETRIES_KEY, 2)]
    tally.add_timings("t::recovers", teardown)
    tally.add_timings("t::recovers2", [(REQUIREMENTS_KEY, [RECOVERS]), (RETRIES_KEY, 3)])
    tally.add_timings("t::finite", [(REQUIREMENTS_KEY, [FINITE])])  # none retried
    assert tally.verdicts[RECOVERS].retries == 5 and tally.verdicts[FINITE].retries == 0
    assert tally.retries == 5
    assert retry_lines(tally) == [f"{RECOVERS}: 5 requests retried after a 429 or 503"]
    assert final_line(tally).endswith("; 5 requests retried after a 429 or 503")
    (entry,) = [r for r in build_document_of(tally)["requirements"] if r["id"] == RECOVERS]
    assert entry["retries"] == 5


def test_a_run_without_retries_says_nothing_of_them() -> None:
    tally = Tally()
    tally.add("t::finite", properties([FINITE], passing(FINITE)), "passed")
    assert retry_lines(tally) == [] and "retried" not in final_line(tally)
    assert all("retries" not in r for r in build_document_of(tally)["requirements"])


def build_document_of(tally: Tally) -> dict[str, Any]:
    return build_document(tally, run={}, endpoint={"url": "http://x/v1"}, server={}, reference={})


# --- the run's requests and tokens, to size a run of a paid or rate-limited endpoint -----------


def test_the_runs_requests_add_up_from_every_tests_report() -> None:
    tally = Tally()
    worker_1 = RequestCount(sent=40, retries=3, tokens=900, untold=0)
    worker_2 = RequestCount(sent=2, retries=0, tokens=0, untold=1)
    tally.add_timings("a::t", [(REQUIREMENTS_KEY, [FINITE]), (REQUESTS_KEY, worker_1.to_json())])
    tally.add_timings("b::t", [(REQUESTS_KEY, worker_2.to_json())])  # of no requirement in play
    tally.add_timings("c::t", [(REQUIREMENTS_KEY, [FINITE])])  # sent nothing
    assert tally.requests == worker_1 + worker_2
    run = build_document_of(tally)["run"]
    assert run["requests"] == {"sent": 42, "retries": 3, "tokens": 900, "untold": 1}


def test_the_requests_line_comes_right_before_the_final_line() -> None:
    tally = Tally()
    tally.add("t::finite", properties([FINITE], passing(FINITE)), "passed")
    tally.requests = RequestCount(sent=1234, retries=12, tokens=98765)
    *_, (_, requests, _), (_, final, _) = summary_lines(tally)
    assert requests == (
        "requests: 1,234 sent (12 retries after 429/503), 98,765 tokens as the server counted them"
    )
    assert final.startswith("conformance: 1 passed")


def test_the_requests_line_says_how_many_answers_did_not_state_their_tokens() -> None:
    line = requests_line(RequestCount(sent=3, retries=1, tokens=0, untold=2))
    assert line == (
        "requests: 3 sent (1 retry after 429/503), 0 tokens as the server counted them, "
        "2 answers did not say"
    )


def test_a_run_that_sent_nothing_prints_no_requests_line() -> None:
    tally = Tally()
    tally.add("t::finite", properties([FINITE], passing(FINITE)), "passed")
    assert not any(text.startswith("requests:") for _, text, _ in summary_lines(tally))
    assert build_document_of(tally)["run"]["requests"]["sent"] == 0
