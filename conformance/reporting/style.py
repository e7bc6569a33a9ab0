"""How each status is shown, in one place: its word and its CSS class (report.html and the
compare pages style the same classes), and the stylesheets those pages carry. A failed SHOULD
shows as a warning, not a failure."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from conformance.verdicts.status import Status


@dataclass(frozen=True)
class Shown:
    word: str  # in text, tables and filters
    css: str  # the chip's class in HTML
    badge: str = "#9f9f9f"  # an SVG fill


SHOWN: dict[str, Shown] = {
    Status.PASS: Shown("PASS", "pass", "#2e9f3e"),
    Status.FAIL: Shown("FAIL", "fail", "#d73a2f"),
    Status.STALE: Shown("STALE", "stale"),
    Status.XFAIL: Shown("XFAIL", "xfail"),
    Status.UNSUPPORTED: Shown("UNSUPPORTED", "unsupported"),
    Status.SKIPPED: Shown("N/A", "na"),  # not applicable here, with the reason
    Status.NOT_RUN: Shown("NOT RUN", "notrun"),
}
WARNING = Shown("WARNING", "warn")  # a SHOULD that failed: reported, it fails no run
UNKNOWN_CSS = "other"  # a status of another suite version's document


@dataclass(frozen=True)
class Count:
    """One of a run's counts (``Tally.counts``), as the reports list them."""

    key: str
    word: str
    css: str


COUNTS = (
    Count("passed", "passed", SHOWN[Status.PASS].css),
    Count("failed", "failed", SHOWN[Status.FAIL].css),
    Count("warnings", "warnings", WARNING.css),
    Count("stale", "stale", SHOWN[Status.STALE].css),
    Count("xfail", "xfail", SHOWN[Status.XFAIL].css),
    Count("unsupported", "unsupported", SHOWN[Status.UNSUPPORTED].css),
    Count("not_applicable", SHOWN[Status.SKIPPED].word, SHOWN[Status.SKIPPED].css),
    Count("not_run", "not run", SHOWN[Status.NOT_RUN].css),
)


def is_warning(status: str, level: str) -> bool:
    return status == Status.FAIL and level == "SHOULD"


_BY_WORD = {shown.word: shown for shown in SHOWN.values()}


def _find(status: str) -> Shown | None:
    """How ``status`` is shown, given as a status or as its word already."""
    return SHOWN.get(status) or _BY_WORD.get(status)


def word(status: str) -> str:
    """The status as text ('N/A' for SKIPPED); another version's status as it is."""
    shown = _find(status)
    return shown.word if shown is not None else status


def css(status: str) -> str:
    shown = _find(status)
    return shown.css if shown is not None else UNKNOWN_CSS


def shown(status: str, level: str) -> Shown:
    """A failed SHOULD as WARNING, every other status as itself."""
    return WARNING if is_warning(status, level) else Shown(word(status), css(status))


def verdict_colour(verdict: str) -> str:
    """The badge's colour of a run's verdict (PASS or FAIL)."""
    return SHOWN[Status.PASS if verdict == Status.PASS else Status.FAIL].badge


def stylesheet(name: str) -> str:
    """A stylesheet shipped in this package (package data: a checkout, an editable install and
    a wheel read it alike), to be inlined: the pages' CSP lets them load nothing."""
    return resources.files("conformance.reporting").joinpath(name).read_text(encoding="utf-8")
