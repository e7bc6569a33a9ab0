"""report.html's Measurements section: SVG plots of the run's series (norms, agreement with
the reference, latency) and a table of its slowest requests."""

from __future__ import annotations

import math
import statistics
from typing import Any

from conformance.reporting.escape import html_text as esc
from conformance.reporting.results import Results
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
from conformance.reporting.wording import plural


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
