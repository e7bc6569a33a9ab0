"""Plots as inline SVG, drawn here (no plotting library, nothing fetched): linear or log axes
with readable ticks, points, and horizontal rules for limits."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from conformance.reporting.escape import html_text as esc

# The lowest a log axis goes: 1 - cosine below this is float64 rounding noise.
LOG_FLOOR = 1e-17
BLUE, RED, ORANGE, GREY = "#0969da", "#cf222e", "#bc4c00", "#6e7781"
MINUS = "\N{MINUS SIGN}"  # typographic, in labels and titles


WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 80, 18, 14, 46
INSET = 8  # pixels between the frame and the outermost marks
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Axis:
    """A value range mapped to a pixel range, linear or logarithmic, with its ticks."""

    lo: float
    hi: float
    log: bool
    ticks: tuple[float, ...]
    labels: tuple[str, ...]

    def fraction(self, value: float) -> float:
        if self.log:
            low, high = math.log10(self.lo), math.log10(self.hi)
            return (math.log10(max(value, self.lo)) - low) / (high - low)
        return (value - self.lo) / (self.hi - self.lo)


def nice_step(raw: float) -> float:
    exponent = math.floor(math.log10(raw))
    fraction = raw / 10**exponent
    nice = 1 if fraction <= 1 else 2 if fraction <= 2 else 5 if fraction <= 5 else 10
    return float(nice * 10.0**exponent)


def signed(text: str) -> str:
    """A typographic minus for a negative number's sign (not an exponent's)."""
    return MINUS + text[1:] if text.startswith("-") else text


def linear_axis(lo: float, hi: float, count: int = 5, integers: bool = False) -> Axis:
    """Ticks at 1, 2 or 5 times a power of ten, the range widened to the outer ticks."""
    if hi - lo <= abs(hi) * 1e-12 or hi == lo:  # one value: give it some room
        pad = abs(lo) * 1e-6 or 1.0
        lo, hi = lo - pad, hi + pad
    step = nice_step((hi - lo) / count)
    if integers:
        step = max(step, 1.0)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    ticks = tuple(round(i * step, decimals + 1) for i in range(first, last + 1))  # no 0.99999..9
    tiny = max(abs(t) for t in ticks) < 1e-3  # 1e-05 reads better than 0.000010
    labels = tuple(signed(f"{t:.2g}" if tiny else f"{t + 0.0:.{decimals}f}") for t in ticks)
    return Axis(ticks[0], ticks[-1], False, ticks, labels)


def power_of_ten(exponent: int) -> str:
    return "10" + str(exponent).translate(SUPERSCRIPT)


def log_axis(lo: float, hi: float) -> Axis:
    """Ticks at powers of ten (every few decades when the range spans many)."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    last = max(last, first + 1)
    every = max(1, math.ceil((last - first) / 6))
    first, last = every * math.floor(first / every), every * math.ceil(last / every)
    exponents = range(first, last + 1, every)
    # One style per axis: all plain numbers, or all powers of ten.
    plain = all(-3 <= k <= 5 for k in exponents)
    labels = tuple(f"{10.0**k:g}" if plain else power_of_ten(k) for k in exponents)
    return Axis(10.0**first, 10.0**last, True, tuple(10.0**k for k in exponents), labels)


def spans_decades(values: Iterable[float]) -> bool:
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) >= 100


def y_axis(values: list[float], extra: list[float]) -> Axis:
    """Log when the positive values span two decades or more, else linear. On a log axis,
    values <= 0 get a decade of their own below the smallest positive one."""
    every = values + extra
    if spans_decades(every):
        positive = [v for v in every if v > 0]
        below = 1 if any(v <= 0 for v in values) else 0
        floor = max(LOG_FLOOR, 10.0 ** (math.floor(math.log10(min(positive))) - below))
        return log_axis(floor, max(positive))
    return linear_axis(min(every), max(every))


@dataclass(frozen=True)
class Mark:
    """A point with its tooltip; hollow when drawn on the axis's edge instead of its value."""

    x: float
    y: float
    tip: str
    colour: str = BLUE
    hollow: bool = False


@dataclass(frozen=True)
class Rule:
    """A horizontal line across the plot, labelled at its right end."""

    y: float
    label: str
    colour: str
    dashed: bool = True


def _px(axis: Axis, value: float, start: float, length: float, flip: bool) -> float:
    f = axis.fraction(value)
    return round(start + INSET + (1 - f if flip else f) * (length - 2 * INSET), 2)


def svg_plot(
    title: str,
    x_axis: Axis,
    y_axis: Axis,
    marks: list[Mark],
    rules: list[Rule],
    x_label: str,
    y_label: str,
    band: tuple[float, float] | None = None,
) -> str:
    """An SVG scatter plot with a frame, grid, tick labels and axis titles."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(value: float) -> float:
        return _px(x_axis, value, LEFT, plot_w, flip=False)

    def y(value: float) -> float:
        return _px(y_axis, value, TOP, plot_h, flip=True)

    bottom = TOP + plot_h
    parts = [
        f'<svg class="plot" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{esc(title)}">',
        f"<title>{esc(title)}</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" class="frame"/>',
    ]
    if band is not None:
        top_px, low_px = y(band[1]), y(band[0])
        parts.append(
            f'<rect x="{LEFT}" y="{top_px}" width="{plot_w}" height="{low_px - top_px:.2f}"'
            ' class="band"/>'
        )
    for tick, label in zip(y_axis.ticks, y_axis.labels, strict=True):
        py = y(tick)
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{py}" y2="{py}" class="grid"/>')
        parts.append(
            f'<text x="{LEFT - 6}" y="{py + 4}" text-anchor="end" class="tick">{esc(label)}</text>'
        )
    for tick, label in zip(x_axis.ticks, x_axis.labels, strict=True):
        px = x(tick)
        parts.append(f'<line x1="{px}" x2="{px}" y1="{bottom}" y2="{bottom + 5}" class="axis"/>')
        parts.append(
            f'<text x="{px}" y="{bottom + 18}" text-anchor="middle" class="tick">'
            f"{esc(label)}</text>"
        )
    for rule in rules:
        py = y(rule.y)
        dash = ' stroke-dasharray="6 4"' if rule.dashed else ""
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{py}" y2="{py}" stroke="{rule.colour}"'
            f' stroke-width="1.5"{dash}/>'
        )
        if rule.label:
            parts.append(
                f'<text x="{LEFT + plot_w - 6}" y="{py - 5}" text-anchor="end" class="rule"'
                f' fill="{rule.colour}">{esc(rule.label)}</text>'
            )
    radius = 3.2 if len(marks) <= 80 else 2.4 if len(marks) <= 300 else 1.6  # dense: smaller
    for mark in marks:
        fill = "#fff" if mark.hollow else mark.colour
        parts.append(
            f'<circle cx="{x(mark.x)}" cy="{y(mark.y)}" r="{radius}" fill="{fill}"'
            f' stroke="{mark.colour}" stroke-width="1.2"><title>{esc(mark.tip)}</title></circle>'
        )
    parts += [
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 8}" text-anchor="middle" class="axis-title">'
        f"{esc(x_label)}</text>",
        f'<text transform="translate(16 {TOP + plot_h / 2}) rotate(-90)" text-anchor="middle"'
        f' class="axis-title">{esc(y_label)}</text>',
        "</svg>",
    ]
    return "".join(parts)
