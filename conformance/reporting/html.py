"""report.html: one self-contained page (no network: inline CSS, SVG drawn here, a few lines of
inline JS) from a results document.

Every string of the document goes through ``esc``: server answers are hostile input. The page's
Content-Security-Policy allows no fetch at all and only the script whose hash it names, so even
a slip in escaping could neither load nor run anything.
"""

from __future__ import annotations

import base64
import hashlib
import math
import statistics
from collections.abc import Sequence
from typing import Any

from conformance.reporting import style
from conformance.reporting.escape import html_text as esc
from conformance.reporting.results import RequirementResult, Results
from conformance.reporting.svgplot import (
    BLUE,
    GREY,
    MINUS,
    ORANGE,
    RED,
    Axis,
    Mark,
    Rule,
    linear_axis,
    svg_plot,
    y_axis,
)
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


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def duration_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


# --- plots -------------------------------------------------------------------------------------


def figure(title: str, body: str, caption: str) -> str:
    return (
        f'<figure class="card"><h3>{esc(title)}</h3>{body}'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def no_data(title: str, caption: str) -> str:
    return figure(title, '<div class="nodata">no data</div>', caption)


def index_axis(count: int) -> Axis:
    return linear_axis(0, max(count - 1, 1), integers=True)


def finite_points(values: list[float]) -> list[tuple[int, float]]:
    """(index, value) of the values a plot can place; NaN and infinities cannot be."""
    return [(i, v) for i, v in enumerate(values) if math.isfinite(v)]


def not_drawn(total: int, drawn: int) -> str:
    missing = total - drawn
    return f" {plural(missing, 'non-finite value')} not drawn." if missing else ""


def norm_plot(points: list[dict[str, Any]], norm_atol: float | None) -> str:
    title = "Norm per input"
    values = [float(p["value"]) for p in points]
    finite = finite_points(values)
    if not finite:
        return no_data(title, f"No finite vector norms in this run ({len(values)} recorded).")
    drawn = [v for _, v in finite]
    # Only a normalizing model's norms sit near 1; a band around 1 means nothing otherwise.
    normalized = all(abs(v - 1) <= max(0.05, 10 * (norm_atol or 0)) for v in drawn)
    band = (1 - norm_atol, 1 + norm_atol) if normalized and norm_atol else None
    extra = ([1.0] if normalized else []) + (list(band) if band else [])
    axis = linear_axis(min(drawn + extra), max(drawn + extra))
    marks = []
    for i, value in finite:
        bad = band is not None and not band[0] <= value <= band[1]
        tip = f"#{i} {points[i]['case']}: {value:.9g}"
        marks.append(Mark(i, value, tip, RED if bad else BLUE))
    rules = [Rule(1.0, "", GREY, dashed=False)] if normalized else []
    deviation = max(abs(v - 1) for v in drawn)
    caption = f"L2 norm of each input's vector, in input order ({len(values)} inputs)"
    if band is not None:
        outside = sum(m.colour == RED for m in marks)
        caption += (
            f"; shaded: 1 ± norm_atol ({norm_atol:g}); largest |‖v‖₂ {MINUS} 1| "
            f"{deviation:.2g}, {outside} outside the band (red)."
        )
    elif normalized:
        caption += f"; largest |‖v‖₂ {MINUS} 1| {deviation:.2g}."
    else:
        caption += "; not near 1: the model's output is not normalized."
    caption += not_drawn(len(values), len(finite))
    body = svg_plot(title, index_axis(len(values)), axis, marks, rules, "input index", "‖v‖₂", band)
    return figure(title, body, caption)


def agreement_plot(points: list[dict[str, Any]]) -> str:
    title = f"1 {MINUS} cosine vs the reference"
    values = [float(p["value"]) for p in points]
    finite = finite_points(values)
    if not finite:
        return no_data(title, f"No finite comparisons with a reference ({len(values)} recorded).")
    limits = sorted({float(p["limit"]) for p in points if p.get("limit") is not None})
    axis = y_axis([v for _, v in finite], limits)
    marks = []
    for i, value in finite:
        limit = points[i].get("limit")
        bad = limit is not None and value > limit
        tip = f"#{i} {points[i]['case']}: 1 {MINUS} cos = {value:.3g}" + (
            "" if limit is None else f" (limit {limit:g})"
        )
        low = axis.log and value < axis.lo  # 0 (or rounding below it) has no place on a log axis
        marks.append(Mark(i, axis.lo if low else value, tip, RED if bad else BLUE, low))
    rules = [Rule(limit, f"limit {limit:g}", RED) for limit in limits]
    caption = (
        f"1 {MINUS} cosine similarity between each case's vector and the reference's "
        f"({len(values)} cases, in order); dashed: the limit; red: over it."
    )
    floored = sum(m.hollow for m in marks)
    if floored:
        caption += (
            f" Log scale: the {floored} values below {axis.lo:.0e} (0: identical vectors) are "
            "drawn hollow on the bottom edge."
        )
    elif axis.log:
        caption += " Log scale."
    caption += not_drawn(len(values), len(finite))
    body = svg_plot(
        title, index_axis(len(values)), axis, marks, rules, "case index", f"1 {MINUS} cos"
    )
    return figure(title, body, caption)


def ms_text(ms: float) -> str:
    return f"{ms:.3g} ms" if ms < 1000 else f"{ms / 1000:.3g} s"


def latency_plot(requests: list[dict[str, Any]]) -> str:
    title = "Latency per request"
    if not requests:
        return no_data(title, "No HTTP requests were recorded in this run.")
    ms = [float(r["seconds"]) * 1000 for r in requests]  # the schema keeps these finite
    median = statistics.median(ms)
    p95 = sorted(ms)[math.ceil(0.95 * len(ms)) - 1]
    axis = y_axis(ms, [median])
    marks = []
    for i, (request, value) in enumerate(zip(requests, ms, strict=True)):
        status = int(request["status"])
        colour = RED if status == 0 else ORANGE if status >= 400 else BLUE
        answer = f"HTTP {status}" if status else "no answer"
        tip = f"#{i} {request['test']}: {value:.1f} ms, {answer}, {request['inputs']} inputs"
        low = axis.log and value < axis.lo
        marks.append(Mark(i, axis.lo if low else value, tip, colour, low))
    rules = [Rule(median, f"median {ms_text(median)}", "#1a7f37", dashed=True)]
    caption = (
        f"Wall time of each HTTP request, in the order sent ({len(ms)} requests): median "
        f"{ms_text(median)}, p95 {ms_text(p95)}, max {ms_text(max(ms))}. Orange: 4xx/5xx; red: "
        f"no answer{'; log scale' if axis.log else ''}."
    )
    body = svg_plot(title, index_axis(len(ms)), axis, marks, rules, "request", "milliseconds")
    return figure(title, body, caption)


# --- page sections -----------------------------------------------------------------------------


def fail_reasons(results: Results) -> list[str]:
    """What made the run FAIL, one line per cause."""
    requirements = results.requirements
    failed = [r.id for r in requirements if r.status is Status.FAIL and r.level == "MUST"]
    stale = [r.id for r in requirements if r.status is Status.STALE]
    regressions = results.regressions
    reasons = []
    if failed:
        reasons.append(f"{plural(len(failed), 'MUST requirement')} failed: " + ", ".join(failed))
    if stale:
        reasons.append(
            f"{plural(len(stale), 'known failure')} now passing (stale): " + ", ".join(stale)
        )
    if regressions:
        reasons.append("baseline regressions: " + ", ".join(regressions))
    return reasons


def banner(results: Results) -> str:
    verdict = results.verdict
    model = results.model or "unknown model"
    warnings = sum(r.is_warning for r in results.requirements)
    if verdict is Status.PASS:
        lines = ["Every MUST requirement that ran passed."]
    else:
        lines = fail_reasons(results) or ["The run failed."]
    if warnings:
        lines.append(f"{plural(warnings, 'SHOULD requirement')} failed: warnings, not failures.")
    certification = ""
    if results.certification is not None:
        certified = results.certification.certified
        reasons = "".join(f"<li>{esc(r)}</li>" for r in results.certification.reasons)
        certification = (
            f'<div class="cert {"yes" if certified else "no"}">'
            f"{'CERTIFIED' if certified else 'NOT CERTIFIED'}"
            + (f"<ul>{reasons}</ul>" if reasons else "")
            + "</div>"
        )
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    return (
        f'<header class="banner {verdict.lower()}"><div class="verdict">{esc(verdict)}</div>'
        f'<div class="about"><div class="model">{esc(model)}</div>'
        f'<div class="sub">embedding-conformance {esc(results.suite["version"])} · '
        f"{esc(results.endpoint['url'])}</div><ul>{items}</ul></div>"
        f"{certification}</header>"
    )


def no_reference_notice(results: Results) -> str:
    if results.referenced:
        return ""
    return (
        '<div class="notice"><strong>No reference model.</strong> The vectors were compared with '
        "nothing: this run shows the endpoint speaks the API, not that it computes the right "
        "embeddings. Run with --reference to check the numbers.</div>"
    )


def definition_list(rows: list[tuple[str, str]]) -> str:
    items = "".join(f"<dt>{esc(key)}</dt><dd>{value}</dd>" for key, value in rows if value)
    return f"<dl>{items}</dl>"


def code(value: object) -> str:
    return f"<code>{esc(value)}</code>" if value not in (None, "") else ""


def metadata(results: Results) -> str:
    endpoint, server, reference = results.endpoint, results.server, results.reference
    run, suite = results.run, results.suite
    tolerances = "<br>".join(
        f"{esc(k)} {esc(f'{v:g}')}" for k, v in sorted(run.get("tolerances", {}).items())
    )
    selection = run.get("selection", {})
    narrowed = "; ".join(
        f"{key} {', '.join(value) if isinstance(value, list) else value}"
        for key, value in selection.items()
        if value not in (None, 0, [])
    )
    options = "".join(
        f"<tr><th>{esc(key)}</th><td>{esc(value)}</td></tr>"
        for key, value in sorted(endpoint.get("options", {}).items())
        if value is not None
    )
    cards = {
        "Endpoint": [
            ("URL", code(endpoint["url"])),
            ("Model", esc(endpoint.get("model") or "—")),
            (
                "Options",
                f"<details><summary>{len(endpoint.get('options', {}))} resolved options</summary>"
                f'<table class="kv">{options}</table></details>'
                if options
                else "",
            ),
        ],
        "Server": [
            ("Models", esc(", ".join(server.get("models", [])) or "—")),
            ("Server header", esc(server.get("server_header") or "—")),
            ("Version", esc(server.get("version") or "—")),
        ],
        "Reference": [
            ("Kind", esc(reference["kind"])),
            ("Description", esc(reference.get("description", ""))),
            ("Spec", code(reference.get("spec"))),
            ("Source", esc(reference.get("source") or "")),
            ("sha256", code(reference.get("sha256"))),
        ],
        "Run": [
            ("Profile", esc(run.get("profile", ""))),
            ("Precision", esc(run.get("precision", ""))),
            ("Tolerances", tolerances),
            ("Selection", esc(narrowed or "complete run")),
            ("Started", esc(run.get("started", ""))),
            ("Duration", esc(duration_text(float(run.get("duration_s", 0.0))))),
            ("Known failures", code(run.get("known_failures"))),
            ("Baseline", code(results.baseline_path)),
            ("Suite", esc(f"{suite['name']} {suite['version']}")),
            ("Catalogue", code(suite.get("catalogue_sha256"))),
        ],
    }
    return (
        '<section class="meta">'
        + "".join(
            f'<div class="card"><h3>{esc(name)}</h3>{definition_list(rows)}</div>'
            for name, rows in cards.items()
        )
        + "</section>"
    )


def counts_strip(results: Results) -> str:
    counts = results.counts
    cells = "".join(
        f'<div class="count {count.css}{" zero" if not counts.get(count.key) else ""}">'
        f"<b>{counts.get(count.key, 0)}</b><span>{esc(count.word)}</span></div>"
        for count in style.COUNTS
    )
    return f'<section class="counts">{cells}</section>'


def jump_links(results: Results) -> str:
    failing = sum(r.status in FAILED for r in results.requirements)
    links = [("requirements-section", "Requirements"), ("measurements", "Measurements")]
    links += [("failures", f"Failures ({failing})")] if failing else []
    anchors = "".join(f'<a href="#{target}">{name}</a>' for target, name in links)
    return f'<nav class="jump">Jump to: {anchors}</nav>'


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


def slowest_requests(requests: list[dict[str, Any]], count: int = 8) -> str:
    """The requests behind the latency plot's outliers, slowest first."""
    title = "Slowest requests"
    if not requests:
        return no_data(title, "No HTTP requests were recorded in this run.")
    ranked = sorted(enumerate(requests), key=lambda pair: -float(pair[1]["seconds"]))[:count]
    rows = "".join(
        f'<tr><td class="num">#{i}</td><td><code>{esc(r["test"])}</code></td>'
        f'<td class="num">{ms_text(float(r["seconds"]) * 1000)}</td>'
        f'<td class="num">{esc(r["status"] or "no answer")}</td>'
        f'<td class="num">{esc(r["inputs"])}</td></tr>'
        for i, r in ranked
    )
    table = (
        '<table class="slow"><thead><tr><th>Request</th><th>Test</th><th>Time</th>'
        f"<th>HTTP</th><th>Inputs</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    caption = f"The {len(ranked)} slowest of {len(requests)} requests; # is the plot's x."
    return figure(title, table, caption)


def plots(results: Results) -> str:
    series = results.series
    norm_atol = results.run.get("tolerances", {}).get("norm_atol")
    return (
        '<section id="measurements"><h2>Measurements</h2><div class="plots">'
        + norm_plot(series.get("norms", []), norm_atol)
        + agreement_plot(series.get("agreement", []))
        + latency_plot(series.get("latency", []))
        + slowest_requests(series.get("latency", []))
        + "</div></section>"
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


def footer(results: Results) -> str:
    integrity = results.integrity
    digest = integrity.get("digest", {}).get("value")
    signature = integrity.get("signature")
    parts = [f"results format {esc(results.format)}"]
    if digest:
        parts.append(f"sha256 {code(digest)}")
    if signature:
        parts.append(f"signed (ed25519, key {code(signature['public_key'])})")
    return f"<footer>{' · '.join(parts)}</footer>"


# Filters the requirement table; without JS the form stays hidden and every row shows.
SCRIPT = """(function () {
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

STYLE = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa;
  --pass: #1a7f37; --fail: #cf222e; --warn: #9a6700; --stale: #8250df; --info: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: #fff;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    "Noto Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 24px; }
h2 { font-size: 20px; margin: 32px 0 12px; padding-bottom: 6px;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 0 0 8px; }
code, pre { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas,
  "Liberation Mono", "DejaVu Sans Mono", monospace; font-size: 12.5px; }
code { overflow-wrap: anywhere; }
a { color: var(--info); }
.muted { color: var(--muted); font-weight: normal; }
.banner { display: flex; gap: 24px; align-items: flex-start; padding: 20px 24px;
  border-radius: 10px; color: #fff; }
.banner.pass { background: linear-gradient(135deg, #1a7f37, #2da44e); }
.banner.fail { background: linear-gradient(135deg, #a40e26, #cf222e); }
.banner .verdict { font-size: 44px; font-weight: 800; letter-spacing: 1px; line-height: 1; }
.banner .about { flex: 1; }
.banner .model { font-size: 20px; font-weight: 700; }
.banner .sub { opacity: .9; font-size: 13px; overflow-wrap: anywhere; }
.banner ul { margin: 8px 0 0; padding-left: 18px; }
.cert { padding: 8px 14px; border-radius: 8px; font-weight: 800; background: rgba(255,255,255,.18);
  border: 2px solid rgba(255,255,255,.7); max-width: 320px; }
.cert ul { font-weight: normal; font-size: 13px; }
.notice { margin-top: 16px; padding: 14px 18px; border-radius: 8px; background: #fff8c5;
  border: 2px solid #d4a72c; color: #4d2d00; font-size: 15px; }
.meta { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr)); gap: 14px;
  margin-top: 20px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; background: #fff; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 3px 12px; margin: 0;
  font-size: 13px; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
table.kv th { text-align: left; color: var(--muted); font-weight: normal; padding-right: 8px; }
.counts { display: flex; flex-wrap: wrap; gap: 10px; margin-top: 16px; }
.count { flex: 1; min-width: 110px; border: 1px solid var(--line); border-left-width: 4px;
  border-radius: 6px; padding: 6px 12px; }
.count b { display: block; font-size: 22px; }
.count span { color: var(--muted); font-size: 12px; text-transform: uppercase;
  letter-spacing: .5px; }
.count.pass { border-left-color: var(--pass); } .count.fail { border-left-color: var(--fail); }
.count.warn { border-left-color: var(--warn); } .count.stale { border-left-color: var(--stale); }
.count.xfail { border-left-color: var(--info); }
.count.unsupported, .count.na, .count.notrun { border-left-color: #8c959f; }
.count.zero b { color: #8c959f; }
.filters { display: flex; gap: 16px; align-items: center; margin-bottom: 10px; flex-wrap: wrap; }
.filters[hidden] { display: none; }
select { font: inherit; padding: 2px 6px; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th { text-align: left; background: var(--soft); border-bottom: 1px solid var(--line);
  padding: 6px 8px; white-space: nowrap; }
td { padding: 6px 8px; border-bottom: 1px solid #eaeef2; vertical-align: top; }
#requirements { table-layout: fixed; }
#requirements td { overflow-wrap: anywhere; }
.c-status { width: 124px; } .c-level { width: 78px; } .c-area { width: 124px; }
#requirements td:nth-child(-n+3) { white-space: nowrap; overflow-wrap: normal; }
.c-id { width: 25%; } .c-num { width: 10%; } .c-limit { width: 11%; } .c-margin { width: 8%; }
#requirements tbody tr:nth-child(even) { background: #fafbfc; }
nav.jump { margin-top: 14px; font-size: 13px; color: var(--muted); }
nav.jump a { margin-right: 14px; }
td.num { font-variant-numeric: tabular-nums; }
td.neg { color: var(--fail); font-weight: 600; white-space: nowrap; }
td.notes { color: var(--fg); overflow-wrap: anywhere; }
.rid { display: block; font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo,
  Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
.why { display: block; color: var(--muted); font-size: 12px; }
.note { color: var(--muted); font-style: italic; }
.chip { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 11.5px;
  font-weight: 700; white-space: nowrap; letter-spacing: .3px; }
.chip.pass { background: #dafbe1; color: var(--pass); }
.chip.fail { background: #ffebe9; color: var(--fail); }
.chip.warn { background: #fff8c5; color: var(--warn); }
.chip.stale { background: #fbefff; color: var(--stale); }
.chip.xfail { background: #ddf4ff; color: var(--info); }
.chip.unsupported, .chip.na, .chip.notrun, .chip.other { background: #eaeef2;
  color: var(--muted); }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(540px, 1fr)); gap: 14px; }
figure { margin: 0; }
figcaption { color: var(--muted); font-size: 12.5px; margin-top: 4px; }
svg.plot { width: 100%; height: auto; display: block; font-family: inherit; }
svg .frame { fill: #fff; stroke: #8c959f; }
svg .band { fill: #dafbe1; }
svg .grid { stroke: #eaeef2; }
svg .axis { stroke: #8c959f; }
svg .tick { font-size: 11px; fill: var(--muted); }
svg .axis-title { font-size: 12px; fill: var(--fg); }
svg .rule { font-size: 11px; font-weight: 600; paint-order: stroke; stroke: #fff;
  stroke-width: 3px; }
.nodata { height: 200px; display: flex; align-items: center; justify-content: center;
  color: var(--muted); background: var(--soft); border-radius: 6px; font-size: 18px; }
.detail { margin-bottom: 14px; }
.detail h3 { font-size: 16px; }
.failure { border-top: 1px solid #eaeef2; padding-top: 8px; margin-top: 8px; }
.label { font-size: 11px; text-transform: uppercase; letter-spacing: .6px; color: var(--muted);
  margin-top: 8px; }
pre { background: var(--soft); border: 1px solid #eaeef2; border-radius: 6px; padding: 8px 10px;
  margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 320px;
  overflow: auto; }
.stale-note { color: var(--stale); }
.warn-note { color: var(--warn); }
table.worst td, table.worst th { font-size: 12px; }
table.slow td.num { white-space: nowrap; }
footer { margin: 32px 0 8px; color: var(--muted); font-size: 12px; }
@media print { .filters { display: none; } pre { max-height: none; } }
"""


def content_security_policy() -> str:
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; "
        "img-src data:; form-action 'none'; base-uri 'none'"
    )


def render_html(results: Results) -> str:
    """report.html for ``results``: the verdict, the run, every requirement, plots, failures."""
    title = f"embedding-conformance: {results.verdict} — {results.model or 'unknown model'}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body><main>"
        + banner(results)
        + no_reference_notice(results)
        + metadata(results)
        + counts_strip(results)
        + jump_links(results)
        + requirement_table(results)
        + plots(results)
        + failures_section(results)
        + footer(results)
        + f"</main><script>{SCRIPT}</script></body></html>\n"
    )
