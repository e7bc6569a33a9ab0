"""A FAIL that follows from another FAIL of its run says so wherever a run is shown: in
results.json (valid against its schema), the Markdown summary, report.html, the terminal's lines
and its final count."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema

from conformance.checks.status import unmeasurable
from conformance.reporting import html as report
from conformance.reporting.markdown import render_summary_md
from conformance.reporting.results import Results
from conformance.reporting.terminal import final_line, requirement_lines
from conformance.verdicts.causes import attribute_causes
from conformance.verdicts.records import CheckRecord
from conformance.verdicts.tally import CHECK_KEY, REQUIREMENTS_KEY, Tally
from tests.reporting.sample import sample_document

CAUSE = "dimension.consistent"


def following_document() -> dict[str, Any]:
    document = sample_document()
    (agreement,) = (r for r in document["requirements"] if r["id"] == "reference.agreement")
    agreement["follows_from"] = [CAUSE]
    return document


def test_results_json_carries_it_within_its_schema() -> None:
    schema = json.loads(
        resources.files("conformance.reporting").joinpath("results.schema.json").read_text()
    )
    jsonschema.Draft202012Validator(schema).validate(following_document())
    results = Results.from_json(following_document())
    (agreement,) = (r for r in results.requirements if r.id == "reference.agreement")
    assert agreement.follows_from == (CAUSE,)
    assert agreement.to_json()["follows_from"] == [CAUSE]


def test_the_reports_name_its_cause() -> None:
    results = Results.from_json(following_document())
    assert f"follows from {CAUSE}: " in render_summary_md(results)
    assert f"follows from {CAUSE}" in report.render_html(results)


def test_the_terminal_names_its_cause_and_counts_it_apart() -> None:
    tally = Tally()
    for requirement, because in ((CAUSE, ()), ("batch.single-vs-batch", ("dimension.*",))):
        check = CheckRecord.of(requirement, unmeasurable("rows of two lengths", because))
        properties = [(REQUIREMENTS_KEY, [requirement]), (CHECK_KEY, check.to_json())]
        tally.add(f"test_{requirement}", properties, "failed")
    attribute_causes(tally)
    (line,) = (text for text in requirement_lines(tally) if "batch.single-vs-batch" in text)
    assert line.endswith(f"not measurable: follows from {CAUSE}")
    assert ", 2 failed (1 following from others), " in final_line(tally)
