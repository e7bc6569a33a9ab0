"""A shields-style flat SVG badge of a run: "embeddings <model> | PASS 52/55"."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conformance.reporting.escape import xml_safe
from conformance.reporting.results import Results
from conformance.reporting.style import verdict_colour
from conformance.verdicts.status import Status

LABEL_COLOUR = "#555"
FONT = "Verdana,Geneva,DejaVu Sans,sans-serif"
HEIGHT = 20
PADDING = 6  # each side of a text
MAX_MODEL = 40  # characters; a badge is a label, not a record

# Rough advance widths of 11px Verdana: close enough for textLength to stretch the rest.
_NARROW = set("fijlrt.,:;|!'()[] /")
_WIDE = set("mwMW%@")


def text_width(text: str) -> float:
    """Estimated width in pixels of ``text`` at 11px Verdana."""
    width = 0.0
    for char in text:
        if char in _NARROW:
            width += 3.9
        elif char in _WIDE:
            width += 9.7
        elif char.isupper() or char.isdigit():
            width += 7.3
        else:
            width += 6.5
    return round(width, 1)


def ran_counts(results: Results) -> tuple[int, int]:
    """(passed, ran): requirements that passed, out of those that ran (all but NOT RUN)."""
    statuses = [r.status for r in results.requirements]
    return statuses.count(Status.PASS), sum(status is not Status.NOT_RUN for status in statuses)


def badge_texts(results: Results) -> tuple[str, str]:
    model = results.model
    if model and len(model) > MAX_MODEL:
        model = model[: MAX_MODEL - 1] + "…"
    label = f"embeddings {model}" if model else "embeddings"
    passed, ran = ran_counts(results)
    value = f"{results.verdict} {passed}/{ran}"
    if results.certification is not None and results.certification.certified:
        value += " · CERTIFIED"
    return xml_safe(label), xml_safe(value)


def _text(parent: ET.Element, x: float, width: float, text: str) -> None:
    """Text with the 1px shadow of the flat style, stretched to the width it was given."""
    for y, fill, opacity in (("15", "#010101", ".3"), ("14", "#fff", "1")):
        element = ET.SubElement(
            parent,
            "text",
            x=f"{x:g}",
            y=y,
            fill=fill,
            textLength=f"{width:g}",
            lengthAdjust="spacingAndGlyphs",
        )
        element.set("fill-opacity", opacity)
        element.text = text


def render_badge(results: Results) -> str:
    """badge.svg: green for a passing run, red for a failing one."""
    label, value = badge_texts(results)
    label_width, value_width = text_width(label), text_width(value)
    left = label_width + 2 * PADDING
    right = value_width + 2 * PADDING
    total = left + right
    colour = verdict_colour(results.verdict)
    svg = ET.Element(
        "svg",
        xmlns="http://www.w3.org/2000/svg",
        width=f"{total:g}",
        height=str(HEIGHT),
        role="img",
    )
    svg.set("aria-label", f"{label}: {value}")
    ET.SubElement(svg, "title").text = f"{label}: {value}"
    gradient = ET.SubElement(svg, "linearGradient", id="shine", x2="0", y2="100%")
    ET.SubElement(gradient, "stop", offset="0").attrib.update(
        {"stop-color": "#bbb", "stop-opacity": ".1"}
    )
    ET.SubElement(gradient, "stop", offset="1").set("stop-opacity", ".1")
    clip = ET.SubElement(svg, "clipPath", id="round")
    ET.SubElement(clip, "rect", width=f"{total:g}", height=str(HEIGHT), rx="3", fill="#fff")
    shapes = ET.SubElement(svg, "g")
    shapes.set("clip-path", "url(#round)")
    ET.SubElement(shapes, "rect", width=f"{left:g}", height=str(HEIGHT), fill=LABEL_COLOUR)
    ET.SubElement(
        shapes, "rect", x=f"{left:g}", width=f"{right:g}", height=str(HEIGHT), fill=colour
    )
    ET.SubElement(shapes, "rect", width=f"{total:g}", height=str(HEIGHT), fill="url(#shine)")
    texts = ET.SubElement(svg, "g")
    texts.attrib.update({"text-anchor": "middle", "font-family": FONT, "font-size": "11"})
    _text(texts, left / 2, label_width, label)
    _text(texts, left + right / 2, value_width, value)
    return ET.tostring(svg, encoding="unicode") + "\n"
