"""A published-matrix folder made up for the page's tests: any number of columns, each a
results document over the real catalogue's ids, a triage file given as text."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.requirements import CATALOGUE
from tests.reporting.test_compare import document, requirement

DIGEST = "ab" * 32  # the catalogue digest the synthetic columns record unless told otherwise


def judged(catalogue: str = DIGEST) -> dict[str, str]:
    return {
        "suite_version": "9.9.9",
        "catalogue_sha256": catalogue,
        "corpus_sha256": "cd" * 32,
        "golden_sha256": "ef" * 32,
        "checks_sha256": "12" * 32,
    }


def peer(name: str, judged_with: Mapping[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "title": f"Server {name}",
        "homepage": f"https://example.org/{name}",
        "about": f"{name}'s OpenAI server with its own model folder, started as its README says",
        "version": "1.2.3",
        "state": "ran",
        "reason": "",
        "startup_s": 3.0,
        "suite_s": 20.0,
        **extra,
    }
    if judged_with is not None:
        entry["judged_with"] = dict(judged_with)
    return entry


def write_matrix(
    folder: Path,
    peers: Sequence[Mapping[str, Any]],
    failing: Mapping[str, Sequence[str]] | None = None,
    triage: str = "",
    following: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> Path:
    """``folder`` with matrix.json, a results.json per ran peer (the ids ``failing`` names
    FAIL, and those ``following`` names, each following from the FAILs it lists; every other
    requirement PASSes) and triage.toml."""
    folder.mkdir(parents=True, exist_ok=True)
    failing, following = failing or {}, following or {}
    for entry in peers:
        if entry["state"] != "ran":
            continue
        fails = set(failing.get(entry["name"], ()))
        follows = following.get(entry["name"], {})
        entries = [
            requirement(r.id, "FAIL" if r.id in {*fails, *follows} else "PASS", level=r.level)
            for r in CATALOGUE
        ]
        for item in entries:
            if item["id"] in follows:
                item["follows_from"] = list(follows[item["id"]])
        (folder / entry["name"]).mkdir(exist_ok=True)
        results = document(entries, server_header=entry["name"])
        (folder / entry["name"] / "results.json").write_text(json.dumps(results), "utf-8")
    manifest = {
        "format": 1,
        "suite": {"version": "9.9.9", "catalogue_sha256": DIGEST},
        "built": "2026-01-01",
        "machine": {"cpu": "CPU", "cores": 2, "memory_gib": 8, "system": "Linux", "python": "3"},
        "last_build": {"peers": [entry["name"] for entry in peers], "wall_time_s": 60},
        "peers": list(peers),
    }
    (folder / "matrix.json").write_text(json.dumps(manifest, indent=1), "utf-8")
    (folder / "triage.toml").write_text(triage, "utf-8")
    return folder
