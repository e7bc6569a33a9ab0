"""The published matrix: ``README.md`` and ``index.html`` rendered from the folder's manifest,
its peers' results documents and its triage file. Rendering is pure over those files (the same
files give the same bytes), so a test can hold the pages to the documents they show.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.files import write_text_atomically
from conformance.matrix import triage
from conformance.reporting import compare
from conformance.reporting.html import duration_text, plural

COMMAND = "tox -e matrix"  # = embedding-conformance matrix build --out docs/compatibility
PAGES = ("README.md", "index.html")


def render(out: Path) -> None:
    """Write both pages of the matrix in ``out``."""
    pages = render_pages(out)
    for name in PAGES:
        write_text_atomically(out / name, pages[name])


Failure = tuple[str, str, "triage.Line | None"]  # requirement, level, its triage line


@dataclass(frozen=True)
class Matrix:
    """What both pages show: the manifest, each peer's results, the triage, the table."""

    manifest: Mapping[str, Any]
    documents: Mapping[str, dict[str, Any]]  # results by peer name
    triaged: Mapping[tuple[str, str], triage.Line]  # by (peer, requirement)
    runs: Sequence[compare.Run]
    rows: Sequence[compare.Row]

    def failures(self) -> Iterator[tuple[Mapping[str, Any], list[Failure]]]:
        """Each peer with FAILs, and (requirement, level, its triage line or None) of each."""
        for entry in self.manifest["peers"]:
            fails = triage.fails_of(self.documents.get(entry["name"]))
            if fails:
                keyed = [(i, level, self.triaged.get((entry["name"], i))) for i, level in fails]
                yield entry, keyed


def render_pages(out: Path) -> dict[str, str]:
    manifest = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    documents = results_documents(out, manifest)
    lines = {line.key: line for line in triage.load(out / triage.FILE)}
    runs = [_run(entry, documents) for entry in manifest["peers"]]
    matrix = Matrix(manifest, documents, lines, runs, compare.matrix(runs))
    return {"README.md": _markdown(matrix), "index.html": _html(matrix)}


def results_documents(out: Path, manifest: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each peer's results document, by peer name (peers without one are left out)."""
    documents = {}
    for entry in manifest["peers"]:
        path = out / entry["name"] / "results.json"
        if entry["state"] == "ran" and path.exists():
            documents[entry["name"]] = json.loads(path.read_text(encoding="utf-8"))
    return documents


def _label(entry: Mapping[str, Any]) -> str:
    return f"{entry['title']} {entry.get('version', '')}".strip()


def _run(entry: Mapping[str, Any], documents: Mapping[str, dict[str, Any]]) -> compare.Run:
    path = Path(entry["name"]) / "results.json"  # relative: the pages must not name a machine
    document = documents.get(entry["name"])
    if document is None:
        return compare.Run(path, {"requirements": []}, _label(entry), _absence(entry))
    return compare.Run(path, document, _label(entry))


def _absence(entry: Mapping[str, Any]) -> str:
    return f"{entry['state']}: {entry.get('reason') or 'no results'}"


def _failed(document: Mapping[str, Any] | None, level: str) -> list[str]:
    return [requirement for requirement, lv in triage.fails_of(document) if lv == level]


def _duration(seconds: float | None) -> str:
    return "—" if seconds is None else duration_text(seconds)


def _built_line(manifest: Mapping[str, Any]) -> str:
    machine, suite = manifest["machine"], manifest["suite"]
    last = manifest["last_build"]
    return (
        f"Built {manifest['built']} on {machine['cpu']} ({machine['cores']} cores, "
        f"{machine['memory_gib']} GiB, {machine['system']}, Python {machine['python']}) with "
        f"embedding-conformance {suite['version']} (requirement catalogue sha256 "
        f"`{suite['catalogue_sha256'][:16]}…`). The last build ran "
        f"{plural(len(last['peers']), 'peer')} in {_duration(last['wall_time_s'])}."
    )


INTRO = (
    "The conformance suite run against real OpenAI-compatible embeddings servers, each "
    "installed from its package registry into an environment of its own and serving "
    "all-MiniLM-L6-v2 offline on 127.0.0.1. Every requirement is a row, every server a column; "
    "every FAIL has a triage line below (what the server does, why it deviates, the public "
    "issue). A FAIL of a SHOULD is a warning; the verdict counts MUSTs only."
)


# Markdown


def _markdown(matrix: Matrix) -> str:
    out = ["# Compatibility matrix", "", INTRO, "", _built_line(matrix.manifest)]
    out += ["", f"Rebuild it with `{COMMAND}` from a clone (see the project README).", ""]
    out += ["## Peers", ""]
    out += _peer_table(matrix.manifest, matrix.documents)
    table = compare.render_markdown(matrix.runs, matrix.rows).rstrip()
    out += ["", "## Requirements by peer", "", table, "", "## Triage", ""]
    for entry, fails in matrix.failures():
        out += [f"### {_label(entry)}", ""]
        out += [f"- `{i}` ({level}): {_line_text(line)}" for i, level, line in fails]
        out.append("")
    if not any(matrix.failures()):
        out.append("No FAIL in any column.")
    return "\n".join(out) + "\n"


def _peer_table(manifest: Mapping[str, Any], documents: Mapping[str, dict[str, Any]]) -> list[str]:
    header = (
        "| Peer | Version | What runs | Start-up | Suite | Verdict | MUST failed | SHOULD failed |"
    )
    out = [header, "|" + " --- |" * 8]
    for entry in manifest["peers"]:
        document = documents.get(entry["name"])
        verdict = _verdict(entry, document)
        must = ", ".join(f"`{r}`" for r in _failed(document, "MUST")) or "—"
        should = ", ".join(f"`{r}`" for r in _failed(document, "SHOULD")) or "—"
        if document is None:
            must = should = "—"
        out.append(
            f"| [{entry['title']}]({entry['homepage']}) | {entry.get('version') or '—'} | "
            f"{entry.get('about') or '—'} | {_duration(entry.get('startup_s'))} | "
            f"{_duration(entry.get('suite_s'))} | {verdict} | {must} | {should} |"
        )
    return out


UNREFERENCED = (
    "NOT CERTIFIED: NO REFERENCE, vectors compared with nothing (--reference none: no golden "
    "of its model; a certificate needs one); reference-free run: {verdict}"
)


def _verdict(entry: Mapping[str, Any], document: Mapping[str, Any] | None) -> str:
    if document is None:
        return f"{entry['state']}: {entry.get('reason') or 'no results'}"
    if (document.get("reference") or {}).get("kind") == "none":
        return UNREFERENCED.format(verdict=document.get("verdict", "?"))
    certification = document.get("certification") or {}
    return "CERTIFIED" if certification.get("certified") else "NOT CERTIFIED"


def _link_word(link: str) -> str:
    return "pull request" if "/pull/" in link else "issue"


def _line_text(line: triage.Line | None) -> str:
    if line is None:
        return "**UNTRIAGED**"
    text = f"{line.does} {line.why}"
    if line.judgement:
        text += f" *Judgement call:* {line.judgement}"
    if line.link:
        text += f" ([{_link_word(line.link)}]({line.link}))"
    return text


# HTML


def _html(matrix: Matrix) -> str:
    e = html.escape
    preface = [f"<p>{e(INTRO)}</p>", f"<p>{e(_built_line(matrix.manifest))}</p>", "<h2>Peers</h2>"]
    preface += ["<table><thead><tr><th>Peer</th><th>Version</th><th>What runs</th>"]
    preface += ["<th>Start-up</th><th>Suite</th><th>Verdict</th><th>Report</th></tr></thead>"]
    preface.append("<tbody>")
    for entry in matrix.manifest["peers"]:
        document = matrix.documents.get(entry["name"])
        report = (
            f'<a href="{e(entry["name"])}/report.html">report</a>' if document is not None else ""
        )
        preface.append(
            f'<tr><td><a href="{e(entry["homepage"])}">{e(entry["title"])}</a></td>'
            f"<td>{e(entry.get('version') or '—')}</td><td>{e(entry.get('about') or '—')}</td>"
            f"<td>{_duration(entry.get('startup_s'))}</td>"
            f"<td>{_duration(entry.get('suite_s'))}</td>"
            f"<td>{e(_verdict(entry, document))}</td><td>{report}</td></tr>"
        )
    preface.append("</tbody></table>")
    appendix = ["<h2>Triage</h2>"]
    for entry, fails in matrix.failures():
        appendix += [f"<h3>{e(_label(entry))}</h3>", "<ul>"]
        appendix += [
            f"<li><code>{e(i)}</code> ({e(level)}): {_line_html(line)}</li>"
            for i, level, line in fails
        ]
        appendix.append("</ul>")
    return compare.render_html(
        matrix.runs, matrix.rows, title="Compatibility matrix", preface=preface, appendix=appendix
    )


def _line_html(line: triage.Line | None) -> str:
    e = html.escape
    if line is None:
        return "<strong>UNTRIAGED</strong>"
    text = e(f"{line.does} {line.why}")
    if line.judgement:
        text += f" <em>Judgement call:</em> {e(line.judgement)}"
    if line.link:
        text += f' (<a href="{e(line.link)}">{_link_word(line.link)}</a>)'
    return text
