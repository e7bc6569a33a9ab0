"""The typed verdict records: plain data on the wire, the same record back."""

from __future__ import annotations

import json
import pickle

from conformance.checks.result import at_most
from conformance.verdicts.records import CheckRecord, Transcript
from conformance.verdicts.status import Status
from conformance.verdicts.tally import CHECK_KEY, REQUIREMENTS_KEY, Tally

NORM = "normalization.unit-norm"


def test_a_record_crosses_the_wire_as_plain_data_and_comes_back_equal() -> None:
    record = CheckRecord.of(NORM, at_most(1.5, 1.0, "too long", 2), "en-01")
    record = CheckRecord(**{**record.__dict__, "response": "HTTP 200", "reproducer": "curl"})
    wire = record.to_json()
    assert json.loads(json.dumps(wire)) == wire  # JSON-able, as xdist and results.json need
    assert pickle.loads(pickle.dumps(wire)) == wire
    assert CheckRecord.from_json(wire) == record


def test_a_passing_record_carries_no_transcript_on_the_wire() -> None:
    wire = CheckRecord.of(NORM, at_most(0.5, 1.0, "ok")).to_json()
    assert "response" not in wire and "reproducer" not in wire and "test" not in wire


def test_status_is_its_text_in_json_and_in_comparisons() -> None:
    assert json.dumps([Status.NOT_RUN, Status.SKIPPED]) == '["NOT RUN", "SKIPPED"]'
    assert Status.NOT_RUN == "NOT RUN" and f"{Status.PASS:<6}|" == "PASS  |"
    assert Status("NOT RUN") is Status.NOT_RUN and "NOT RUN" in {Status.NOT_RUN}


def test_only_a_failed_must_and_a_stale_known_failure_fail_the_run() -> None:
    failing = {(s, level) for s in Status for level in ("MUST", "SHOULD") if s.fails_run(level)}
    assert failing == {(Status.FAIL, "MUST"), (Status.STALE, "MUST"), (Status.STALE, "SHOULD")}


def test_the_tally_keeps_typed_transcripts_of_failures() -> None:
    record = CheckRecord(NORM, False, 2.0, "<= 1", -1.0, "too long", 0, "en-01", "HTTP 200", "c")
    tally = Tally()
    tally.add("t::n", [(REQUIREMENTS_KEY, [NORM]), (CHECK_KEY, record.to_json())], "failed")
    verdict = tally.verdicts[NORM]
    assert verdict.status is Status.FAIL
    assert verdict.transcripts == (Transcript("t::n", "too long", "en-01", "HTTP 200", "c"),)
    assert verdict.worst == record.in_test("t::n")
    assert (verdict.measured, verdict.limit, verdict.margin) == (2.0, "<= 1", -1.0)
