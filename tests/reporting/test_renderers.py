"""The reports rendered from a results document: report.html, summary.md, badge.svg, junit.xml."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from importlib import resources
from typing import Any

import jsonschema
import pytest

from conformance.reporting import html as report
from conformance.reporting.badge import render_badge
from conformance.reporting.html_plots import agreement_plot, norm_plot
from conformance.reporting.junit import render_junit
from conformance.reporting.markdown import render_summary_md
from conformance.reporting.results import Results
from conformance.reporting.svgplot import linear_axis, y_axis
from tests.reporting.sample import HOSTILE, sample_document

SVG = "{http://www.w3.org/2000/svg}"


def load_schema() -> dict[str, Any]:
    text = (resources.files("conformance.reporting") / "results.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def test_sample_is_a_valid_results_document() -> None:
    jsonschema.Draft202012Validator(load_schema()).validate(sample_document())


def test_sample_has_every_status() -> None:
    statuses = set(load_schema()["$defs"]["status"]["enum"])
    assert {r["status"] for r in sample_document()["requirements"]} == statuses


# --- report.html -------------------------------------------------------------------------------


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, and the text inside <script>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def parsed(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    tags.close()
    return tags


def svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", page, flags=re.DOTALL)]


def test_html_loads_nothing_from_outside() -> None:
    page = report.render_html(Results.from_json(sample_document()))
    tags = parsed(page)
    assert not [t for t, _ in tags.tags if t in ("link", "img", "iframe", "object", "embed")]
    assert not [attrs for _, attrs in tags.tags if "src" in attrs]
    hrefs = [attrs["href"] or "" for _, attrs in tags.tags if "href" in attrs]
    assert hrefs and all(href.startswith("#") for href in hrefs)  # in-page links only
    assert "@import" not in page
    assert not re.search(r"url\(\s*['\"]?(?!#)", page)
    assert not re.search(r"(src|href)\s*=\s*['\"]?\s*(https?:)?//", page)
    policy = next(a["content"] for t, a in tags.tags if a.get("http-equiv"))
    assert policy is not None and "default-src 'none'" in policy


def test_html_escapes_hostile_text() -> None:
    page = report.render_html(Results.from_json(sample_document()))
    assert HOSTILE not in page
    assert html.escape(HOSTILE) in page
    tags = parsed(page)
    assert [t for t, _ in tags.tags].count("script") == 1  # ours, nothing injected
    assert "\x1b" not in page and "\\x1b[31m" in page  # control characters shown, not sent


def test_html_escapes_a_foreign_verdict_and_counts() -> None:
    """Another version's verdict or counts are document text too, even in a class name."""
    document = sample_document(verdict=f'x"{HOSTILE}', counts={"passed": HOSTILE})
    page = report.render_html(Results.from_json(document))
    assert HOSTILE not in page and 'class="banner x&quot;&lt;script&gt;' in page
    assert [t for t, _ in parsed(page).tags].count("script") == 1


def test_html_runs_only_the_script_its_policy_names() -> None:
    tags = parsed(report.render_html(Results.from_json(sample_document())))
    (script,) = tags.scripts
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = next(a["content"] for t, a in tags.tags if a.get("http-equiv"))
    assert f"script-src 'sha256-{digest}'" in (policy or "")


def test_html_shows_verdict_certification_and_every_requirement() -> None:
    document = sample_document()
    page = report.render_html(Results.from_json(document))
    assert '<header class="banner fail"><div class="verdict">FAIL</div>' in page
    assert "NOT CERTIFIED" in page
    assert "reference.agreement failed" in page
    for requirement in document["requirements"]:
        assert f'<span class="rid">{requirement["id"]}</span>' in page
    rows = [a for t, a in parsed(page).tags if t == "tr" and "data-status" in a]
    assert [r["data-status"] for r in rows] == [
        "PASS",
        "PASS",
        "FAIL",
        "WARNING",
        "STALE",
        "XFAIL",
        "UNSUPPORTED",
        "N/A",
        "NOT RUN",
    ]
    assert {r["data-area"] for r in rows} == {r["area"] for r in document["requirements"]}


def test_html_filters_are_hidden_until_the_script_runs() -> None:
    tags = parsed(report.render_html(Results.from_json(sample_document())))
    form = next(a for t, a in tags.tags if t == "form")
    assert form["id"] == "filters" and "hidden" in form
    names = [a["name"] for t, a in tags.tags if t == "select"]
    assert names == ["status", "level", "area"]


def test_html_details_every_failing_requirement() -> None:
    page = report.render_html(Results.from_json(sample_document()))
    failures = page[page.index('<section id="failures">') :]
    for requirement_id in ("reference.agreement", "input.token-ids", "errors.content-type"):
        assert f'id="req-{requirement_id}"' in failures
    for absent in ("batch.large", "dimensions.honoured", "envelope.object-list"):
        assert f'id="req-{absent}"' not in failures
    assert "curl -sS http://127.0.0.1:8000/v1/embeddings" in failures
    assert "HTTP 400 text/plain\nbad request | try again</pre>" in failures
    assert "remove the entry from the known-failures file" in failures
    assert "long-text" in failures  # a worst case


def test_html_warns_loudly_without_a_reference() -> None:
    assert "compared with nothing" not in report.render_html(Results.from_json(sample_document()))
    document = sample_document(reference={"kind": "none", "spec": "none"})
    assert 'class="notice"' in report.render_html(Results.from_json(document))


def test_html_of_a_passing_run() -> None:
    document = sample_document(
        verdict="PASS",
        requirements=sample_document()["requirements"][:2],
        certification={"certified": True, "reasons": []},
    )
    page = report.render_html(Results.from_json(document))
    assert '<header class="banner pass">' in page and ">CERTIFIED<" in page
    assert 'id="failures"' not in page


def test_html_plots_are_svg_with_every_point() -> None:
    document = sample_document()
    page = report.render_html(Results.from_json(document))
    plots = svgs(page)
    assert len(plots) == 3
    for plot, series in zip(plots, ("norms", "agreement", "latency"), strict=True):
        circles = plot.findall(".//circle")
        assert len(circles) == len(document["series"][series])
        assert plot.findall(".//text")  # tick labels and axis titles
    zeros = sum(p["value"] == 0 for p in document["series"]["agreement"])
    hollow = [c for c in plots[1].findall(".//circle") if c.get("fill") == "#fff"]
    assert zeros and len(hollow) == zeros
    assert f"the {zeros} values below" in page  # the caption says where zeros went
    assert "median 13" in page


def test_html_without_series_says_no_data() -> None:
    document = sample_document(series={"norms": [], "agreement": [], "latency": []})
    page = report.render_html(Results.from_json(document))
    assert not svgs(page)
    assert page.count('<div class="nodata">no data</div>') == 4  # three plots, slowest requests


def test_norm_plot_draws_the_band_only_for_normalized_output() -> None:
    near_one = [{"case": "a", "value": 1.0000001}, {"case": "b", "value": 0.9999}]
    assert 'class="band"' in norm_plot(near_one, 1e-3)
    assert 'class="band"' not in norm_plot(near_one, None)
    raw = [{"case": "a", "value": 7.5}, {"case": "b", "value": 9.0}]
    assert "not normalized" in norm_plot(raw, 1e-3)
    assert 'class="band"' not in norm_plot(raw, 1e-3)


def test_plots_leave_out_what_cannot_be_placed() -> None:
    nan = float("nan")
    norms = [{"case": "a", "value": 1.0}, {"case": "b", "value": nan}]
    assert "1 non-finite value not drawn" in norm_plot(norms, 1e-3)
    assert "no data" in norm_plot([{"case": "a", "value": nan}], 1e-3)
    agreement = [{"case": "a", "value": float("inf"), "limit": 1e-5}]
    agreement += [{"case": "b", "value": 1e-7, "limit": 1e-5}]
    plot = agreement_plot(agreement)
    assert plot.count("<circle") == 1 and "1 non-finite value not drawn" in plot


def test_axes() -> None:
    axis = linear_axis(0.99999, 1.00001)
    assert axis.lo <= 0.99999 and axis.hi >= 1.00001 and "1.000000" in axis.labels
    log = y_axis([0.0, 1e-9, 5e-6], [1e-5])
    assert log.log and log.lo <= 1e-10 and log.hi >= 1e-5
    assert not y_axis([0.0, 0.002, 0.008], [0.01]).log  # one decade: linear
    flat = linear_axis(3.0, 3.0)
    assert flat.lo < 3.0 < flat.hi


# --- summary.md --------------------------------------------------------------------------------


def cells(row: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]


def test_markdown_heading_and_run_line() -> None:
    lines = render_summary_md(Results.from_json(sample_document())).splitlines()
    assert lines[0] == "## embedding-conformance: FAIL — all-MiniLM-L6-v2"
    assert "127.0.0.1:8000/v1/embeddings" in lines[2] and "tier fp32" in lines[2]
    assert "profile full" in lines[2]
    assert "2 passed, 1 failed, 1 warnings, 1 stale, 1 xfail" in lines[4]


def test_markdown_lists_what_did_not_pass_failures_first() -> None:
    text = render_summary_md(Results.from_json(sample_document()))
    not_passed = text[text.index("### Not passed") : text.index("<details>")]
    rows = [cells(line) for line in not_passed.splitlines() if line.startswith("| ")][1:]
    assert [(r[0], r[2]) for r in rows] == [
        ("FAIL", "reference.agreement"),
        ("FAIL (warning)", "errors.content-type"),
        ("STALE", "input.token-ids"),
        ("XFAIL", "batch.large"),
        ("UNSUPPORTED", "dimensions.honoured"),
        ("N/A", "reference.token-ids"),
        ("NOT RUN", "concurrency.isolation"),
    ]
    assert all(len(row) == 7 for row in rows)  # escaped pipes split no cell
    agreement, warning = rows[0], rows[1]
    assert agreement[3:6] == ["0.0021", "&lt;= 1e-05", "-0.00209"]  # one escaper: entities
    assert warning[3] == "text/plain \\| charset=utf-8"
    assert "<script>" not in text and "&lt;script&gt;" in text


def test_markdown_folds_every_requirement_away() -> None:
    document = sample_document()
    text = render_summary_md(Results.from_json(document))
    folded = text[text.index("<details>") : text.index("</details>")]
    rows = [cells(line) for line in folded.splitlines() if line.startswith("| ")][1:]
    assert [r[2] for r in rows] == [r["id"] for r in document["requirements"]]


def test_markdown_of_a_passing_run() -> None:
    document = sample_document(verdict="PASS", requirements=sample_document()["requirements"][:2])
    document.pop("certification")
    text = render_summary_md(Results.from_json(document))
    assert text.startswith("## embedding-conformance: PASS — all-MiniLM-L6-v2\n")
    assert "Every requirement that ran passed." in text and "### Not passed" not in text


# --- badge.svg ---------------------------------------------------------------------------------


def badge_text(svg: ET.Element) -> list[str]:
    return [t.text or "" for t in svg.iter(f"{SVG}text")]


def test_badge_shows_verdict_and_passed_of_ran() -> None:
    svg = ET.fromstring(render_badge(Results.from_json(sample_document())))
    assert svg.tag == f"{SVG}svg"
    texts = badge_text(svg)
    assert "embeddings all-MiniLM-L6-v2" in texts
    assert "FAIL 2/8" in texts  # 9 requirements, one NOT RUN
    fills = {r.get("fill") for r in svg.iter(f"{SVG}rect")}
    assert "#d73a2f" in fills
    shapes = svg.find(f"{SVG}g")
    assert shapes is not None
    widths = [float(r.get("width", 0)) for r in shapes.iter(f"{SVG}rect")]
    assert widths[0] + widths[1] == pytest.approx(float(svg.get("width", 0)))


def test_badge_of_a_certified_run_with_a_hostile_model_name() -> None:
    document = sample_document(verdict="PASS", certification={"certified": True, "reasons": []})
    document["endpoint"]["model"] = f"m{HOSTILE}&\x00"
    svg = ET.fromstring(render_badge(Results.from_json(document)))
    texts = badge_text(svg)
    assert "PASS 2/8 · CERTIFIED" in texts
    assert any(HOSTILE in text for text in texts)  # shown as text, parsed back intact
    assert "#2e9f3e" in {r.get("fill") for r in svg.iter(f"{SVG}rect")}


# --- junit.xml ---------------------------------------------------------------------------------


def cases_by_name(root: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in root.iter("testcase")}


def properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def test_junit_counts_match_the_document() -> None:
    root = ET.fromstring(render_junit(Results.from_json(sample_document())))
    (suite,) = root.iter("testsuite")
    assert suite.get("name") == "embedding-conformance"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("9", "2", "4")
    assert suite.get("errors") == "0"
    assert suite.get("timestamp") == "2025-06-01T12:00:00+00:00"
    assert len(cases_by_name(root)) == 9
    assert len(list(root.iter("failure"))) == 2 and len(list(root.iter("skipped"))) == 4


def test_junit_fails_what_fails_the_run() -> None:
    cases = cases_by_name(ET.fromstring(render_junit(Results.from_json(sample_document()))))
    agreement = cases["reference.agreement"]
    assert agreement.get("classname") == "conformance.reference"
    failure = agreement.find("failure")
    assert failure is not None and failure.get("type") == "FAIL"
    assert "margin -0.00209" in failure.get("message", "")
    assert "curl -sS" in (failure.text or "") and HOSTILE in (failure.text or "")
    stale = cases["input.token-ids"].find("failure")
    assert stale is not None and "known-failures" in stale.get("message", "")


def test_junit_should_failure_is_a_warning() -> None:
    case = cases_by_name(ET.fromstring(render_junit(Results.from_json(sample_document()))))[
        "errors.content-type"
    ]
    assert case.find("failure") is None and case.find("skipped") is None
    assert (
        properties(case)["warning"] == "measured text/plain | charset=utf-8 vs == application/json"
    )
    out = case.findtext("system-out") or ""
    assert out.startswith("WARNING (SHOULD") and "\\x1b[31m" in out


def test_junit_skips_what_was_not_judged() -> None:
    cases = cases_by_name(ET.fromstring(render_junit(Results.from_json(sample_document()))))
    skips = {name: case.find("skipped") for name, case in cases.items()}
    messages = {name: skip.get("message") for name, skip in skips.items() if skip is not None}
    assert messages == {
        "batch.large": "XFAIL: known failure: server caps batches at 32",
        "dimensions.honoured": (
            "UNSUPPORTED: the server rejects the dimensions parameter with a 400"
        ),
        "reference.token-ids": "N/A: the reference has no tokenizer",
        "concurrency.isolation": "NOT RUN: deselected (-k, -m or --requirements)",
    }
    passed = cases["envelope.object-list"]
    assert [child.tag for child in passed] == ["properties"]


def test_junit_properties_carry_measurements() -> None:
    cases = cases_by_name(ET.fromstring(render_junit(Results.from_json(sample_document()))))
    assert properties(cases["reference.agreement"]) == {
        "requirement": "reference.agreement",
        "level": "MUST",
        "status": "FAIL",
        "measured": "0.0021",
        "limit": "<= 1e-05",
        "margin": "-0.00209",
    }
    assert "margin" not in properties(cases["envelope.object-list"])
    assert properties(cases["normalization.unit-norm"])["margin"] == "0.000999881"


# --- retried requests (issue 28) ---------------------------------------------------------------


def document_with_retries() -> dict[str, Any]:
    """The sample with 7 requests of errors.content-type's tests retried after a 503."""
    document = sample_document()
    (entry,) = [r for r in document["requirements"] if r["id"] == "errors.content-type"]
    entry["retries"] = 7
    return document


def test_retries_are_a_valid_optional_field() -> None:
    validator = jsonschema.Draft202012Validator(load_schema())
    validator.validate(document_with_retries())
    document = document_with_retries()
    document["requirements"][3]["retries"] = 0  # absent, not zero, when none was retried
    assert not validator.is_valid(document)
    results = Results.from_json(document_with_retries())
    by_id = {r.id: r for r in results.requirements}
    assert by_id["errors.content-type"].retries == 7 and by_id["batch.large"].retries == 0
    assert by_id["errors.content-type"].to_json()["retries"] == 7
    assert "retries" not in by_id["batch.large"].to_json()


def test_html_and_markdown_show_the_retries() -> None:
    results = Results.from_json(document_with_retries())
    assert "7 requests retried after a 429 or 503" in report.render_html(results)
    text = render_summary_md(results)
    assert "7 requests retried after a 429 or 503 (errors.content-type: 7)" in text
    plain = Results.from_json(sample_document())
    assert "retried" not in render_summary_md(plain) and "retried" not in report.render_html(plain)


# --- the run's requests and tokens -------------------------------------------------------------


def test_the_runs_requests_are_a_valid_optional_section() -> None:
    validator = jsonschema.Draft202012Validator(load_schema())
    document = sample_document()
    assert document["run"]["requests"]["sent"] == 1234  # the sample has them: it validates
    del document["run"]["requests"]  # a document of an older version has none
    validator.validate(document)
    document["run"]["requests"] = {"sent": 3, "retries": 0, "tokens": -1, "untold": 0}
    assert not validator.is_valid(document)
