"""GitHub step-summary markdown from a results document: the verdict, what did not pass, and
every requirement folded away underneath."""

from __future__ import annotations

import re
from typing import Any

from conformance.reporting.junit import xml_safe

SHOWN = {"SKIPPED": "N/A"}
# The order of the "not passed" table: what fails the run first, then what was not judged.
ORDER = ("FAIL", "STALE", "XFAIL", "UNSUPPORTED", "SKIPPED", "NOT RUN")
CELL_LIMIT = 200  # characters; the full text is in report.html

# Markdown and HTML punctuation that could turn a server's text into markup, links or table
# columns; backslash-escaped, every one of them renders as itself.
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#+!|~&])")


def md_text(value: object) -> str:
    """``value`` as literal text on one line, safe in a heading or a table cell."""
    text = " ".join(xml_safe(str(value)).split())
    if len(text) > CELL_LIMIT:
        text = text[: CELL_LIMIT - 1] + "…"
    return _SPECIAL.sub(r"\\\1", text)


def number(value: object) -> str:
    if value is None:
        return "—"
    return md_text(f"{value:.3g}" if isinstance(value, float) else value)


def status_text(requirement: dict[str, Any]) -> str:
    status = SHOWN.get(str(requirement["status"]), str(requirement["status"]))
    if status == "FAIL" and requirement["level"] == "SHOULD":
        return "FAIL (warning)"
    return status


def explanation(requirement: dict[str, Any]) -> str:
    """Why a requirement did not pass: the reason it was not judged, or what failed."""
    status = requirement["status"]
    known = requirement.get("known_failure", {})
    if status == "STALE":
        return "known failure now passes: remove it from the known-failures file"
    if status == "XFAIL":
        return f"known failure: {known.get('reason', '')}"
    if requirement.get("reason"):
        return str(requirement["reason"])
    failures = requirement.get("failures", [])
    return str(failures[0]["detail"]) if failures else ""


def table(requirements: list[dict[str, Any]], explain: bool) -> list[str]:
    header = ["Status", "Level", "Requirement", "Measured", "Limit", "Margin"]
    header += ["Details"] if explain else []
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in requirements:
        cells = [status_text(r), r["level"], md_text(r["id"])]
        cells += [number(r["measured"]), number(r["limit"]), number(r["margin"])]
        cells += [md_text(explanation(r))] if explain else []
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def not_passed(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Requirements that did not pass, failing MUSTs first, then in ORDER, then as listed."""

    def rank(requirement: dict[str, Any]) -> tuple[int, int]:
        status = requirement["status"]
        return ORDER.index(status), int(status == "FAIL" and requirement["level"] == "SHOULD")

    others = [r for r in document["requirements"] if r["status"] in ORDER]
    return sorted(others, key=rank)


def counts_line(counts: dict[str, int]) -> str:
    names = (
        ("passed", "passed"),
        ("failed", "failed"),
        ("warnings", "warnings"),
        ("stale", "stale"),
        ("xfail", "xfail"),
        ("unsupported", "unsupported"),
        ("not_applicable", "N/A"),
        ("not_run", "not run"),
    )
    return ", ".join(f"{counts.get(key, 0)} {name}" for key, name in names)


def reference_text(reference: dict[str, Any]) -> str:
    if reference["kind"] == "none":
        return "**none** (vectors compared with nothing)"
    return md_text(reference.get("description") or f"{reference['kind']} {reference['spec']}")


def render_summary_md(document: dict[str, Any]) -> str:
    """summary.md, for $GITHUB_STEP_SUMMARY."""
    endpoint, run = document["endpoint"], document["run"]
    model = endpoint.get("model") or "unknown model"
    lines = [f"## embedding-conformance: {document['verdict']} — {md_text(model)}", ""]
    lines.append(
        f"Endpoint {md_text(endpoint['url'])} · reference {reference_text(document['reference'])}"
        f" · tier {md_text(run['precision'])} · profile {md_text(run['profile'])}"
        f" · suite {md_text(document['suite']['version'])}"
    )
    lines += ["", counts_line(document["counts"]) + f" · {run.get('duration_s', 0.0):.1f} s"]
    certification = document.get("certification")
    if certification is not None:
        verdict = "CERTIFIED" if certification["certified"] else "NOT CERTIFIED"
        reasons = "; ".join(certification["reasons"])
        lines += ["", f"**{verdict}**" + (f": {md_text(reasons)}" if reasons else "")]
    if document["reference"]["kind"] == "none":
        lines += ["", "> **No reference**: agreement with the model was not checked."]
    regressions = document.get("baseline", {}).get("regressions", [])
    if regressions:
        lines += ["", "Baseline regressions: " + md_text(", ".join(regressions))]
    others = not_passed(document)
    if others:
        lines += ["", "### Not passed", "", *table(others, explain=True)]
    else:
        lines += ["", "Every requirement that ran passed."]
    everything = document["requirements"]
    lines += [
        "",
        f"<details><summary>All {len(everything)} requirements</summary>",
        "",
        *table(everything, explain=False),
        "",
        "</details>",
    ]
    return "\n".join(lines) + "\n"
