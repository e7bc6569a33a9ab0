"""The results document (results.json): one run, as data. Its layout is the shipped JSON Schema
``results.schema.json``; every other report (HTML, markdown, badge, JUnit, compare) reads it."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict
from importlib import resources
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from conformance import __version__
from conformance.reporting.tally import Tally, Verdict
from conformance.requirements import CATALOGUE, Requirement

FORMAT = 1
REDACTED = "<redacted>"
SECRET_OPTIONS = ("api_key",)
# Statuses that fail a run: a MUST that failed, and a known failure that now passes.
FAILING = ("FAIL", "STALE")


def schema() -> dict[str, Any]:
    """The shipped JSON Schema of the results document."""
    text = (resources.files("conformance.reporting") / "results.schema.json").read_text("utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


def catalogue_sha256() -> str:
    """Digest of every requirement as declared: equal digests, the same requirements judged."""
    canonical = json.dumps([asdict(r) for r in CATALOGUE], sort_keys=True).encode("utf-8")
    return hashlib.sha256(canonical).hexdigest()


def redact_url(url: str) -> str:
    """The URL without a password in it (``https://user:secret@host`` keeps the user)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:{REDACTED}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def redact_options(options: dict[str, Any]) -> dict[str, Any]:
    """Options as given, with every secret replaced (None stays None: 'not given' is no secret)."""
    return {
        key: (REDACTED if key in SECRET_OPTIONS and value is not None else value)
        for key, value in options.items()
    }


def run_fails(level: str, status: str) -> bool:
    return status == "STALE" or (status == "FAIL" and level == "MUST")


def _reason(verdict: Verdict) -> str:
    return {
        "UNSUPPORTED": verdict.unsupported,
        "SKIPPED": verdict.skipped,
        "NOT RUN": "deselected (-k, -m or --requirements)",
    }.get(verdict.status, "")


def _worst_case(check: dict[str, Any]) -> dict[str, Any]:
    keys = ("test", "case", "passed", "measured", "limit", "margin", "detail")
    return {key: check.get(key) for key in keys}


def requirement_entry(requirement: Requirement, verdict: Verdict) -> dict[str, Any]:
    worst = verdict.worst or {}
    return {
        "id": requirement.id,
        "area": requirement.id.partition(".")[0],
        "level": requirement.level,
        "status": verdict.status,
        "why": requirement.why,
        "guards": requirement.guards,
        "tests": verdict.tests,
        "duration_s": round(verdict.duration, 6),
        "measured": worst.get("measured"),
        "limit": worst.get("limit"),
        "margin": worst.get("margin"),
        "worst_cases": [_worst_case(check) for check in verdict.worst_cases],
        "failures": [
            {key: record.get(key) for key in ("test", "detail", "response", "reproducer")}
            for record in verdict.failure_records
        ],
        "notes": list(dict.fromkeys(verdict.notes)),
        "reason": verdict.reason or _reason(verdict),
    }


def json_safe(value: Any) -> Any:
    """Strict JSON: a non-finite float (a server's NaN) becomes its text, as measurements do."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def _plottable(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in points if math.isfinite(p["value"])]


def build_document(
    tally: Tally,
    *,
    run: dict[str, Any],
    endpoint: dict[str, Any],
    server: dict[str, Any],
    reference: dict[str, Any],
    extra_failure: bool = False,
) -> dict[str, Any]:
    """The document for ``tally``; ``extra_failure``: the run failed for a reason outside the
    requirements (a baseline regression)."""
    requirements = []
    for requirement in tally.requirements:
        entry = requirement_entry(requirement, tally.verdicts[requirement.id])
        entry.update(tally.annotations.get(requirement.id, {}))
        requirements.append(entry)
    failed = extra_failure or any(run_fails(r["level"], r["status"]) for r in requirements)
    document: dict[str, Any] = json_safe(
        {
            "format": FORMAT,
            "suite": {
                "name": "embedding-conformance",
                "version": __version__,
                "catalogue_sha256": catalogue_sha256(),
            },
            "run": run,
            "endpoint": {**endpoint, "url": redact_url(endpoint["url"])},
            "server": server,
            "reference": reference,
            "verdict": "FAIL" if failed else "PASS",
            "counts": tally.counts(),
            "requirements": requirements,
            "series": {  # a NaN has no place on a plot; reference.agreement has failed on it
                "norms": _plottable(tally.series.get("norms", [])),
                "agreement": _plottable(tally.series.get("agreement", [])),
                "latency": tally.latency,
            },
        }
    )
    return document
