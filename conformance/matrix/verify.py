"""What a published matrix must satisfy: every results.json intact (its own integrity digest,
and the sha256 the manifest records for the file), every FAIL triaged and no stale triage line,
and pages that are exactly what the files render to (nobody edits a verdict by hand)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.matrix import triage
from conformance.matrix.build import MANIFEST, load_manifest
from conformance.matrix.publish import PAGES, render_pages, results_documents
from conformance.reporting import integrity
from conformance.variants import file_sha256

GATE_DOCUMENTS = ("gate/before.json", "gate/after.json")


def problems(out: Path, pages: bool = True) -> list[str]:
    manifest = load_manifest(out)
    if not manifest:
        return [f"no {MANIFEST}: not a published matrix"]
    found = []
    for entry in manifest["peers"]:
        path = out / entry["name"] / "results.json"
        if entry["state"] != "ran":
            continue
        if not path.exists():
            found.append(f"{entry['name']}: results.json is missing")
            continue
        if file_sha256(path) != entry["results_sha256"]:
            found.append(f"{entry['name']}: results.json is not the file {MANIFEST} records")
        document = json.loads(path.read_text(encoding="utf-8"))
        if not integrity.verify(document).ok:
            found.append(f"{entry['name']}: results.json fails its own integrity digest")
    for name in GATE_DOCUMENTS:  # the upgrade gate's two runs, when published beside
        path = out / name
        if path.exists() and not integrity.verify(json.loads(path.read_text())).ok:
            found.append(f"{name} fails its own integrity digest")
    lines = triage.load(out / triage.FILE)
    fails = triage.failures(results_documents(out, manifest))
    found += triage.check(lines, fails).problems()
    if pages:
        rendered = render_pages(out)
        for name in PAGES:
            page = out / name
            if not page.exists() or page.read_text(encoding="utf-8") != rendered[name]:
                found.append(f"{name} is not what the published files render to (matrix render)")
    return found
