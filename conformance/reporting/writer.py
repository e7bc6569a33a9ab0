"""Writing a run's reports: each file whole or not at all (a temporary file, then a rename)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.files import write_text_atomically
from conformance.reporting.results import Results

RESULTS = "results.json"


def render_results(document: dict[str, Any]) -> str:
    # ASCII: a lone surrogate from a server's answer cannot break the UTF-8 file
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def renderers() -> dict[str, Callable[[Results], str]]:
    """The reports besides results.json, by file name; imported when reports are written,
    not at every pytest start."""
    from conformance.reporting.badge import render_badge
    from conformance.reporting.html import render_html
    from conformance.reporting.junit import render_junit
    from conformance.reporting.markdown import render_summary_md

    return {
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
    write_results(document, directory / RESULTS)
    results = Results.from_json(document)  # what the renderers read: the verdicts typed
    for name, render in renderers().items():
        write_text_atomically(directory / name, render(results))
    return [directory / RESULTS, *(directory / name for name in renderers())]


def write_run(
    document: dict[str, Any], results_json: str | None, report_dir: str | None
) -> list[Path]:
    """results.json where ``results_json`` says (--results-json), every report into
    ``report_dir`` (--report-dir); the reports written there, in order."""
    if results_json is not None:
        write_results(document, Path(results_json))
    return write_reports(document, Path(report_dir)) if report_dir is not None else []
