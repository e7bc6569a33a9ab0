"""``--baseline``: what the server did before a change (an engine upgrade), to compare with now.

A baseline is a golden directory recorded from the old server (``golden record
--from-endpoint``: vectors, response shape, error answers), optionally holding the
``results.json`` of the suite's run against it; or that ``results.json`` alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.references import load_golden
from conformance.references.recording import Recording

RESULTS = "results.json"


@dataclass(frozen=True)
class Baseline:
    path: Path
    recording: Recording | None  # None for a results.json alone
    results: dict[str, Any] | None  # the old run's results.json, if there is one

    @property
    def statuses(self) -> dict[str, str]:
        """Requirement id -> status in the old run (empty without its results.json)."""
        if self.results is None:
            return {}
        return {r["id"]: r["status"] for r in self.results.get("requirements", [])}

    @property
    def behaviour(self) -> dict[str, Any] | None:
        """Response shape and error answers, when recorded from an endpoint."""
        return self.recording.manifest.get("behaviour") if self.recording else None

    def __str__(self) -> str:
        parts = []
        if self.recording is not None:
            created = self.recording.manifest["created"]
            parts.append(f"golden {self.path} ({self.recording.source}, {created})")
        if self.results is not None:
            endpoint = self.results.get("endpoint")
            url = endpoint.get("url") if isinstance(endpoint, dict) else endpoint
            parts.append(f"results of {url or 'an earlier run'}")
        return " + ".join(parts)


def _results(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"--baseline {path}: not a readable results.json ({exc})") from None
    if not isinstance(document, dict) or not isinstance(document.get("requirements"), list):
        raise ValueError(f"--baseline {path}: not a results.json written by --results-json")
    return document


def load_baseline(text: str) -> Baseline:
    path = Path(text)
    if path.is_file():
        return Baseline(path, None, _results(path))
    if not path.is_dir():
        raise ValueError(f"--baseline {text}: no such file or directory")
    results = _results(path / RESULTS) if (path / RESULTS).is_file() else None
    return Baseline(path, load_golden(path), results)
