"""JUnit XML from a results document: one test case per requirement, for CI test reporters.

Only what fails the run is a <failure>: a MUST that failed, and a known failure gone stale. A
failed SHOULD is a warning (a property and system-out), and every status that did not judge the
requirement (UNSUPPORTED, N/A, NOT RUN, XFAIL) is <skipped> with its reason.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conformance.reporting import style
from conformance.reporting.escape import xml_safe
from conformance.reporting.results import RequirementResult, Results
from conformance.verdicts.status import Status

SUITE_NAME = "embedding-conformance"


def _text(value: object) -> str:
    return xml_safe(f"{value:.6g}" if isinstance(value, float) else str(value))


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _measurement(requirement: RequirementResult) -> str:
    if requirement.measured is None:
        return ""
    text = f"measured {_text(requirement.measured)}"
    if requirement.limit:
        text += f" vs {requirement.limit}"
    if requirement.margin is not None:
        text += f" (margin {_text(requirement.margin)})"
    return text


def _failure_text(requirement: RequirementResult) -> str:
    """Every recorded failure with what came back and how to send it again, then the worst
    checks: what a CI log needs to act on without opening report.html."""
    blocks = []
    for failure in requirement.failures:
        lines = [f"test: {failure.test}", failure.detail]
        if failure.response:
            lines += ["response:", failure.response]
        if failure.reproducer:
            lines += ["reproduce:", failure.reproducer]
        blocks.append("\n".join(lines))
    worst = [
        f"{'pass' if case.passed else 'FAIL'} {case.test}"
        + (f" [{case.case}]" if case.case else "")
        + f": measured {_text(case.measured)} vs {case.limit}"
        + ("" if case.margin is None else f" (margin {_text(case.margin)})")
        for case in requirement.worst_cases
    ]
    if worst:
        blocks.append("worst cases:\n" + "\n".join(worst))
    return xml_safe("\n\n".join(blocks))


def _failure_message(requirement: RequirementResult) -> str:
    failures = requirement.failures
    if requirement.status is Status.STALE:
        known = requirement.known_failure.reason if requirement.known_failure else ""
        return "a listed known failure now passes: remove it from the known-failures file" + (
            f" ({known})" if known else ""
        )
    return _measurement(requirement) or (_first_line(failures[0].detail) if failures else "")


def _skip_message(requirement: RequirementResult) -> str:
    status = style.word(requirement.status)
    reason = requirement.reason
    if requirement.status is Status.XFAIL:
        known = requirement.known_failure
        reason = "known failure: " + (known.reason if known else "")
    return f"{status}: {reason}" if reason else status


def _properties(requirement: RequirementResult, warning: str | None) -> list[tuple[str, str]]:
    pairs: list[tuple[str, object]] = [
        ("requirement", requirement.id),
        ("level", requirement.level),
        ("status", requirement.status),
        ("measured", requirement.measured),
        ("limit", requirement.limit),
        ("margin", requirement.margin),
    ]
    if warning is not None:
        pairs.append(("warning", warning))
    return [(name, _text(value)) for name, value in pairs if value is not None]


def _testcase(requirement: RequirementResult) -> ET.Element:
    warning = _failure_message(requirement) if requirement.is_warning else None
    case = ET.Element(
        "testcase",
        classname=f"conformance.{_text(requirement.area)}",
        name=_text(requirement.id),
        time=f"{requirement.duration_s:.3f}",
    )
    properties = ET.SubElement(case, "properties")
    for name, value in _properties(requirement, warning):
        ET.SubElement(properties, "property", name=name, value=value)
    if requirement.fails_run:
        failure = ET.SubElement(
            case,
            "failure",
            message=xml_safe(_failure_message(requirement)),
            type=str(requirement.status),
        )
        failure.text = _failure_text(requirement)
    elif not requirement.status.judged:
        skipped = ET.SubElement(case, "skipped", message=xml_safe(_skip_message(requirement)))
        skipped.text = _failure_text(requirement) or None
    out = []
    if warning is not None:
        out.append(f"WARNING (SHOULD, does not fail the run): {warning}\n")
        out.append(_failure_text(requirement))
    out += [f"note: {note}" for note in requirement.notes]
    if out:
        ET.SubElement(case, "system-out").text = xml_safe("\n".join(out))
    return case


def render_junit(results: Results) -> str:
    """junit.xml: one <testsuite>, one <testcase> per requirement of the catalogue."""
    requirements = results.requirements
    totals = {
        "tests": str(len(requirements)),
        "failures": str(sum(r.fails_run for r in requirements)),
        "errors": "0",
        "skipped": str(sum(not r.status.judged for r in requirements)),
        "time": f"{results.run.get('duration_s', 0.0):.3f}",
    }
    root = ET.Element("testsuites", {"name": SUITE_NAME, **totals})
    timestamp = _text(results.run.get("started", ""))
    suite = ET.SubElement(root, "testsuite", {"name": SUITE_NAME, "timestamp": timestamp, **totals})
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("verdict", results.verdict),
        ("endpoint", results.endpoint["url"]),
        ("model", results.endpoint.get("model")),
        ("profile", results.run.get("profile")),
        ("precision", results.run.get("precision")),
        ("suite_version", results.suite["version"]),
    ):
        if value is not None:
            ET.SubElement(properties, "property", name=name, value=_text(value))
    suite.extend(_testcase(requirement) for requirement in requirements)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
