"""What a published matrix must satisfy: every results.json intact (its own integrity digest,
and the sha256 the manifest records for the file), every column judged with the installed
suite's catalogue, corpus, goldens and version (else it is stale), every FAIL triaged and no
stale triage line, and pages that are exactly what the files render to (nobody edits a verdict
by hand)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.matrix import judged, triage
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
    found += stale(out)
    for name in GATE_DOCUMENTS:  # the upgrade gate's two runs, when published beside
        path = out / name
        if path.exists() and not integrity.verify(json.loads(path.read_text())).ok:
            found.append(f"{name} fails its own integrity digest")
    lines = triage.load(out / triage.FILE)
    documents = results_documents(out, manifest)
    fails, followers = triage.failures(documents), triage.following(documents)
    found += triage.check(lines, fails, followers).problems()
    found += [
        f"triage line quoting what its FAIL's results do not hold: {peer} {requirement}"
        for peer, requirement in triage.unfilled(lines, documents)
    ]
    if pages:
        rendered = render_pages(out)
        for name in PAGES:
            page = out / name
            if not page.exists() or page.read_text(encoding="utf-8") != rendered[name]:
                found.append(f"{name} is not what the published files render to (matrix render)")
    return found


def stale(out: Path) -> list[str]:
    """Each column judged with anything but the installed suite, and what differs. A column
    that did not run has no verdict to be stale; one without a record predates the records."""
    found = []
    for entry in load_manifest(out).get("peers", []):
        path = out / entry["name"] / "results.json"
        if entry["state"] != "ran" or not path.exists():  # a missing file is reported above
            continue
        was = entry.get(judged.KEY)
        rebuild = f"rebuild it (matrix build {entry['name']})"
        if not was:
            found.append(f"{entry['name']}: stale, no record of what it was judged with; {rebuild}")
            continue
        document = json.loads(path.read_text(encoding="utf-8"))
        differs = judged.differences(was, judged.installed(document))
        if differs:
            found.append(
                f"{entry['name']}: stale, judged with another {', '.join(differs)} "
                f"than the installed suite; {rebuild}"
            )
    return found
