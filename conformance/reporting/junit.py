"""JUnit XML from a results document: one test case per requirement, for CI test reporters.

Only what fails the run is a <failure>: a MUST that failed, and a known failure gone stale. A
failed SHOULD is a warning (a property and system-out), and every status that did not judge the
requirement (UNSUPPORTED, N/A, NOT RUN, XFAIL) is <skipped> with its reason.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from conformance.reporting.document import run_fails

SUITE_NAME = "embedding-conformance"
NOT_JUDGED = ("UNSUPPORTED", "SKIPPED", "NOT RUN", "XFAIL")
SHOWN = {"SKIPPED": "N/A"}

# XML 1.0 cannot carry control characters or lone surrogates, escaped or not: one hostile byte
# in a server's answer must not make the whole file unreadable.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML cannot represent written as its escape (``\\x1b``)."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _text(value: object) -> str:
    return xml_safe(f"{value:.6g}" if isinstance(value, float) else str(value))


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _measurement(requirement: dict[str, Any]) -> str:
    if requirement.get("measured") is None:
        return ""
    text = f"measured {_text(requirement['measured'])}"
    if requirement.get("limit"):
        text += f" vs {requirement['limit']}"
    if requirement.get("margin") is not None:
        text += f" (margin {_text(requirement['margin'])})"
    return text


def _failure_text(requirement: dict[str, Any]) -> str:
    """Every recorded failure with what came back and how to send it again, then the worst
    checks: what a CI log needs to act on without opening report.html."""
    blocks = []
    for failure in requirement.get("failures", []):
        lines = [f"test: {failure['test']}", failure["detail"]]
        if failure.get("response"):
            lines += ["response:", failure["response"]]
        if failure.get("reproducer"):
            lines += ["reproduce:", failure["reproducer"]]
        blocks.append("\n".join(lines))
    worst = [
        f"{'pass' if case['passed'] else 'FAIL'} {case['test']}"
        + (f" [{case['case']}]" if case.get("case") else "")
        + f": measured {_text(case['measured'])} vs {case['limit']}"
        + ("" if case.get("margin") is None else f" (margin {_text(case['margin'])})")
        for case in requirement.get("worst_cases", [])
    ]
    if worst:
        blocks.append("worst cases:\n" + "\n".join(worst))
    return xml_safe("\n\n".join(blocks))


def _failure_message(requirement: dict[str, Any]) -> str:
    failures = requirement.get("failures", [])
    if requirement["status"] == "STALE":
        known = requirement.get("known_failure", {}).get("reason", "")
        return "a listed known failure now passes: remove it from the known-failures file" + (
            f" ({known})" if known else ""
        )
    return _measurement(requirement) or (_first_line(failures[0]["detail"]) if failures else "")


def _skip_message(requirement: dict[str, Any]) -> str:
    status = SHOWN.get(requirement["status"], requirement["status"])
    reason = requirement.get("reason", "")
    if requirement["status"] == "XFAIL":
        reason = "known failure: " + requirement.get("known_failure", {}).get("reason", "")
    return f"{status}: {reason}" if reason else status


def _properties(requirement: dict[str, Any], warning: str | None) -> list[tuple[str, str]]:
    pairs = [
        ("requirement", requirement["id"]),
        ("level", requirement["level"]),
        ("status", requirement["status"]),
    ]
    pairs += [(key, requirement[key]) for key in ("measured", "limit", "margin")]
    if warning is not None:
        pairs.append(("warning", warning))
    return [(name, _text(value)) for name, value in pairs if value is not None]


def _testcase(requirement: dict[str, Any]) -> ET.Element:
    status, level = requirement["status"], requirement["level"]
    warning = _failure_message(requirement) if status == "FAIL" and level == "SHOULD" else None
    case = ET.Element(
        "testcase",
        classname=f"conformance.{_text(requirement['area'])}",
        name=_text(requirement["id"]),
        time=f"{requirement.get('duration_s', 0.0):.3f}",
    )
    properties = ET.SubElement(case, "properties")
    for name, value in _properties(requirement, warning):
        ET.SubElement(properties, "property", name=name, value=value)
    if run_fails(level, status):
        failure = ET.SubElement(
            case, "failure", message=xml_safe(_failure_message(requirement)), type=status
        )
        failure.text = _failure_text(requirement)
    elif status in NOT_JUDGED:
        skipped = ET.SubElement(case, "skipped", message=xml_safe(_skip_message(requirement)))
        skipped.text = _failure_text(requirement) or None
    out = []
    if warning is not None:
        out.append(f"WARNING (SHOULD, does not fail the run): {warning}\n")
        out.append(_failure_text(requirement))
    out += [f"note: {note}" for note in requirement.get("notes", [])]
    if out:
        ET.SubElement(case, "system-out").text = xml_safe("\n".join(out))
    return case


def render_junit(document: dict[str, Any]) -> str:
    """junit.xml: one <testsuite>, one <testcase> per requirement of the catalogue."""
    requirements = document["requirements"]
    failures = sum(run_fails(r["level"], r["status"]) for r in requirements)
    skipped = sum(r["status"] in NOT_JUDGED for r in requirements)
    totals = {
        "tests": str(len(requirements)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
        "time": f"{document['run'].get('duration_s', 0.0):.3f}",
    }
    root = ET.Element("testsuites", {"name": SUITE_NAME, **totals})
    timestamp = _text(document["run"].get("started", ""))
    suite = ET.SubElement(root, "testsuite", {"name": SUITE_NAME, "timestamp": timestamp, **totals})
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("verdict", document["verdict"]),
        ("endpoint", document["endpoint"]["url"]),
        ("model", document["endpoint"].get("model")),
        ("profile", document["run"].get("profile")),
        ("precision", document["run"].get("precision")),
        ("suite_version", document["suite"]["version"]),
    ):
        if value is not None:
            ET.SubElement(properties, "property", name=name, value=_text(value))
    suite.extend(_testcase(requirement) for requirement in requirements)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
