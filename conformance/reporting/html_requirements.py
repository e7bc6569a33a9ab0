"""report.html's parts of each requirement: the table of every requirement (its status, its
measurement, why), filtered by a few lines of script, and the card of each one that failed."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.reporting import style
from conformance.reporting.escape import html_text as esc
from conformance.reporting.results import RequirementResult, Results
from conformance.verdicts.records import CheckRecord
from conformance.verdicts.status import Status
from conformance.verdicts.tally import retries_text

FAILED = (Status.FAIL, Status.STALE)  # what the failures section details (warnings too)
# The status filter's choices, most serious first (WARNING: a SHOULD that failed).
FILTER_ORDER = ("FAIL", "STALE", "WARNING", "XFAIL", "PASS", "UNSUPPORTED", "N/A", "NOT RUN")


def number(value: object) -> str:
    """A measurement for a table: floats to 3 significant digits, missing as a dash."""
    if value is None:
        return "—"
    return esc(f"{value:.3g}" if isinstance(value, float) else value)


def chip(requirement: RequirementResult) -> str:
    shown = style.shown(requirement.status, requirement.level)
    title = ' title="a SHOULD: does not fail the run"' if requirement.is_warning else ""
    return f'<span class="chip {shown.css}"{title}>{esc(shown.word)}</span>'


def notes_cell(requirement: RequirementResult) -> str:
    """Why a requirement has its status, in a sentence or two; failures link to their details."""
    parts = []
    if requirement.reason:
        parts.append(esc(requirement.reason))
    known = requirement.known_failure
    if known is not None:
        case = f" [{known.case}]" if known.case else ""
        parts.append(f"known failure{esc(case)}: {esc(known.reason)}")
    capability = requirement.capability
    if capability is not None:
        declared = "declared" if capability.declared else "not declared"
        parts.append(f"capability {esc(capability.name)} ({declared}): {esc(capability.judgement)}")
    failures = requirement.failures
    if requirement.follows_from:
        parts.append(f"follows from {esc(', '.join(requirement.follows_from))}")
    if requirement.status in FAILED:
        link = f'<a href="#{anchor(requirement)}">details</a>'
        if failures:
            first = (failures[0].detail.strip().splitlines() or [""])[0][:160]
            more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
            link = f"{esc(first)}{more} {link}"
        parts.append(link)
    parts += [f'<span class="note">{esc(note)}</span>' for note in requirement.notes]
    if requirement.retries:
        parts.append(f'<span class="note">{esc(retries_text(requirement.retries))}</span>')
    return "<br>".join(parts)


def anchor(requirement: RequirementResult) -> str:
    return esc("req-" + requirement.id)


def margin_cell(margin: object) -> str:
    css = ' class="neg"' if isinstance(margin, (int, float)) and margin < 0 else ""
    return f"<td{css}>{number(margin)}</td>"


def requirement_row(requirement: RequirementResult) -> str:
    shown = style.shown(requirement.status, requirement.level)
    return (
        f'<tr data-status="{esc(shown.word)}" data-level="{esc(requirement.level)}"'
        f' data-area="{esc(requirement.area)}">'
        f"<td>{chip(requirement)}</td><td>{esc(requirement.level)}</td>"
        f"<td>{esc(requirement.area)}</td>"
        f'<td><span class="rid">{esc(requirement.id)}</span>'
        f'<span class="why">{esc(requirement.why)}</span></td>'
        f'<td class="num">{number(requirement.measured)}</td>'
        f'<td class="num">{number(requirement.limit)}</td>'
        f"{margin_cell(requirement.margin)}"
        f'<td class="notes">{notes_cell(requirement)}</td></tr>'
    )


def select(name: str, label: str, options: list[str]) -> str:
    choices = "".join(f'<option value="{esc(o)}">{esc(o)}</option>' for o in options)
    return (
        f'<label>{esc(label)} <select name="{name}"><option value="">all</option>'
        f"{choices}</select></label>"
    )


def requirement_table(results: Results) -> str:
    requirements = results.requirements
    statuses = {style.shown(r.status, r.level).word for r in requirements}
    status_options = ["not PASS"] + [s for s in FILTER_ORDER if s in statuses]
    areas = sorted({r.area for r in requirements})
    levels = [level for level in ("MUST", "SHOULD") if any(r.level == level for r in requirements)]
    rows = "".join(requirement_row(r) for r in requirements)
    return (
        '<section id="requirements-section"><h2>Requirements</h2>'
        '<form id="filters" class="filters" hidden>'
        + select("status", "Status", status_options)
        + select("level", "Level", levels)
        + select("area", "Area", areas)
        + f'<span id="shown" class="muted">{len(requirements)} shown</span></form>'
        '<table id="requirements"><colgroup><col class="c-status"><col class="c-level">'
        '<col class="c-area"><col class="c-id"><col class="c-num"><col class="c-limit">'
        '<col class="c-margin"><col></colgroup>'
        "<thead><tr><th>Status</th><th>Level</th><th>Area</th>"
        "<th>Requirement</th><th>Measured</th><th>Limit</th><th>Margin</th>"
        f"<th>Reason / notes</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def pre(label: str, text: object) -> str:
    if text in (None, ""):
        return ""
    return f'<div class="label">{esc(label)}</div><pre>{esc(text)}</pre>'


def worst_row(case: CheckRecord) -> str:
    result = "pass" if case.passed else "fail"
    return (
        f'<tr><td><span class="chip {result}">{result}</span></td>'
        f"<td><code>{esc(case.test)}</code></td>"
        f"<td>{esc(case.case or '—')}</td>"
        f'<td class="num">{number(case.measured)}</td>'
        f'<td class="num">{number(case.limit)}</td>{margin_cell(case.margin)}'
        f"<td>{esc(case.detail)}</td></tr>"
    )


def worst_table(cases: Sequence[CheckRecord]) -> str:
    if not cases:
        return ""
    return (
        '<div class="label">Worst cases</div><table class="worst"><thead><tr><th></th>'
        "<th>Test</th><th>Case</th><th>Measured</th><th>Limit</th><th>Margin</th>"
        f"<th>Detail</th></tr></thead><tbody>{''.join(map(worst_row, cases))}</tbody></table>"
    )


def failure_details(requirement: RequirementResult) -> str:
    known = requirement.known_failure
    note = ""
    if requirement.is_warning:
        note = '<p class="warn-note">A SHOULD: reported as a warning, it does not fail the run.</p>'
    if requirement.status is Status.STALE and known is not None:
        note = (
            f'<p class="stale-note">Listed as a known failure ({esc(known.reason)}'
            + (f"; {esc(known.link)}" if known.link else "")
            + "), but it passed: remove the entry from the known-failures file.</p>"
        )
    failures = "".join(
        f'<div class="failure"><div class="test"><code>{esc(f.test)}</code></div>'
        + pre("Detail", f.detail)
        + pre("Response", f.response)
        + pre("Reproduce", f.reproducer)
        + "</div>"
        for f in requirement.failures
    )
    return (
        f'<article class="card detail" id="{anchor(requirement)}">'
        f"<h3>{chip(requirement)} {esc(requirement.id)} "
        f'<span class="muted">{esc(requirement.level)}</span></h3>'
        f'<p class="why">{esc(requirement.why)}'
        f'<br><span class="muted">Guards against: {esc(requirement.guards)}</span></p>'
        f"{note}{failures}{worst_table(requirement.worst_cases)}</article>"
    )


def failures_section(results: Results) -> str:
    failing = [r for r in results.requirements if r.status in FAILED]
    if not failing:
        return ""
    # What fails the run first, then SHOULD warnings.
    failing.sort(key=lambda r: not r.fails_run)
    title = "Failures and warnings" if any(r.is_warning for r in failing) else "Failures"
    return (
        f'<section id="failures"><h2>{title}</h2>'
        + "".join(failure_details(r) for r in failing)
        + "</section>"
    )


# Filters the requirement table; without JS the form stays hidden and every row shows.
FILTER_SCRIPT = """(function () {
  var form = document.getElementById("filters");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#requirements tbody tr"));
  var shown = document.getElementById("shown");
  function apply() {
    var s = form.status.value, l = form.level.value, a = form.area.value, n = 0;
    rows.forEach(function (row) {
      var d = row.dataset;
      var ok = (s === "" || (s === "not PASS" ? d.status !== "PASS" : d.status === s)) &&
        (l === "" || d.level === l) && (a === "" || d.area === a);
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + " of " + rows.length + " shown";
  }
  form.hidden = false;
  form.addEventListener("change", apply);
  apply();
})();"""
