"""Writing a run's reports: each file whole or not at all (a temporary file, then a rename)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.files import write_text_atomically

RESULTS = "results.json"


def render_results(document: dict[str, Any]) -> str:
    # ASCII: a lone surrogate from a server's answer cannot break the UTF-8 file
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def renderers() -> dict[str, Callable[[dict[str, Any]], str]]:
    """By file name; imported when reports are written, not at every pytest start."""
    from conformance.reporting.badge import render_badge
    from conformance.reporting.html import render_html
    from conformance.reporting.junit import render_junit
    from conformance.reporting.markdown import render_summary_md

    return {
        RESULTS: render_results,
        "junit.xml": render_junit,
        "report.html": render_html,
        "summary.md": render_summary_md,
        "badge.svg": render_badge,
    }


def write_results(document: dict[str, Any], path: Path) -> None:
    write_text_atomically(path, render_results(document))


def write_reports(document: dict[str, Any], directory: Path) -> list[Path]:
    """Every report of the run into ``directory``; the paths written, in order."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, render in renderers().items():
        write_text_atomically(directory / name, render(document))
        written.append(directory / name)
    return written
