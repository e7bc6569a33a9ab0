"""The results document (results.json): one run, as data. Its layout is the shipped JSON Schema
``results.schema.json``; every other report (HTML, markdown, badge, JUnit, compare) reads it."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from importlib import resources
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from conformance import __version__
from conformance.reporting.results import requirement_result
from conformance.requirements import CATALOGUE
from conformance.verdicts.records import Certification
from conformance.verdicts.status import Status
from conformance.verdicts.tally import Tally

FORMAT = 1
REDACTED = "<redacted>"
SECRET_OPTIONS = ("api_key",)


def schema() -> dict[str, Any]:
    """The shipped JSON Schema of the results document."""
    text = (resources.files("conformance.reporting") / "results.schema.json").read_text("utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


def catalogue_sha256() -> str:
    """Digest of every requirement as declared: equal digests, the same requirements judged.
    A requirement's ``capability`` is left out: it says how a vendor's --capabilities file is
    read, not what is judged (a run without one judges alike whatever it says)."""
    declared = [{k: v for k, v in asdict(r).items() if k != "capability"} for r in CATALOGUE]
    canonical = json.dumps(declared, sort_keys=True).encode("utf-8")
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
    regressions: Sequence[str] = (),
    baseline: str | None = None,
    certification: Certification | None = None,
) -> dict[str, Any]:
    """The document for ``tally``; ``regressions``: what did worse than the ``baseline`` (a
    path), which fails the run though it failed no requirement."""
    requirements = [requirement_result(r, v) for r, v in tally.in_order()]
    failed = bool(regressions) or any(r.fails_run for r in requirements)
    document: dict[str, Any] = {
        "format": FORMAT,
        "suite": {
            "name": "embedding-conformance",
            "version": __version__,
            "catalogue_sha256": catalogue_sha256(),
        },
        "run": {**run, "requests": tally.requests.to_json()},
        "endpoint": {**endpoint, "url": redact_url(endpoint["url"])},
        "server": server,
        "reference": reference,
        "verdict": Status.FAIL if failed else Status.PASS,
        "counts": tally.counts(),
        "requirements": [r.to_json() for r in requirements],
        "series": {  # a NaN has no place on a plot; reference.agreement has failed on it
            "norms": _plottable(tally.series.get("norms", [])),
            "agreement": _plottable(tally.series.get("agreement", [])),
            "latency": tally.latency,
        },
    }
    if baseline is not None:
        document["baseline"] = {"path": baseline, "regressions": list(regressions)}
    if certification is not None:
        document["certification"] = certification.to_json()
    result: dict[str, Any] = json.loads(json.dumps(json_safe(document)))  # plain JSON types
    return result
