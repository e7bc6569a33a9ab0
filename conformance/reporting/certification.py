"""``--certify``: what a certification run refuses before it starts, and its verdict after.

A certificate says every requirement was judged, against a reference, with nothing waived; so
anything that narrows the run or excuses a failure is refused up front (exit 4), not noted.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.settings import Settings
from conformance.tolerances import FUZZ_EXAMPLES


def certify_refusals(settings: Settings, config: pytest.Config) -> list[str]:
    """Why this run cannot certify (empty: it can)."""
    option = config.option
    refused = [
        f"-k {option.keyword!r}" if option.keyword else "",
        f"-m {option.markexpr!r}" if option.markexpr else "",
        "--deselect" if getattr(option, "deselect", None) else "",
        "-x/--maxfail (the run must not stop early)" if option.maxfail else "",
        "--last-failed/--failed-first" if getattr(option, "lf", False) else "",
        "test paths (the packaged suite runs whole)"
        if config.args_source == pytest.Config.ArgsSource.ARGS
        else "",
        "--requirements" if settings.requirements else "",
        f"--fuzz-examples {settings.fuzz_examples} (fewer than {FUZZ_EXAMPLES})"
        if settings.fuzz_examples < FUZZ_EXAMPLES
        else "",
        f"--conformance-profile {settings.profile}" if settings.profile != "full" else "",
        "--known-failures (nothing is waived)" if settings.known_failures else "",
        "--reference none (vectors must be compared)" if settings.reference == "none" else "",
    ]
    return [reason for reason in refused if reason]


def certification(document: dict[str, Any]) -> dict[str, Any]:
    """CERTIFIED when the run's verdict is PASS: every MUST passed or is an optional feature
    cleanly refused (UNSUPPORTED); SHOULD findings are reported, not held against it."""
    reasons = [
        f"{r['id']} {r['status']} ({r['level']})"
        for r in document["requirements"]
        if r["status"] == "STALE" or (r["status"] == "FAIL" and r["level"] == "MUST")
    ]
    reasons += [
        f"baseline regression: {line}"
        for line in document.get("baseline", {}).get("regressions", [])
    ]
    not_run = [r["id"] for r in document["requirements"] if r["status"] == "NOT RUN"]
    if not_run:
        reasons.append(f"not run: {', '.join(not_run)}")
    if document["reference"]["kind"] == "none":
        reasons.append("no reference: vectors compared with nothing")
    return {"certified": not reasons, "reasons": reasons}
