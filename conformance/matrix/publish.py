"""The published matrix: ``README.md`` and ``index.html`` rendered from the folder's manifest,
its peers' results documents and its triage file. Rendering is pure over those files (the same
files give the same bytes), so a test can hold the pages to the documents they show.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from conformance.files import write_text_atomically
from conformance.matrix import triage
from conformance.reporting import compare, compare_html, compare_markdown
from conformance.reporting.document import catalogue_sha256
from conformance.reporting.escape import (
    html_prose,
    html_text,
    markdown_link,
    markdown_prose,
    markdown_text,
)
from conformance.reporting.wording import duration_text, plural

COMMAND = "tox -e matrix"  # = embedding-conformance matrix build --out docs/compatibility
PAGES = ("README.md", "index.html")


def render(out: Path) -> None:
    """Write both pages of the matrix in ``out``."""
    pages = render_pages(out)
    for name in PAGES:
        write_text_atomically(out / name, pages[name])


Failure = tuple[str, str, "triage.Line | None"]  # requirement, level, its triage line
Follower = tuple[str, str]  # a FAIL that follows from another: requirement, level


@dataclass(frozen=True)
class Published:
    """What both pages show: the manifest, each peer's results, the triage, the table."""

    manifest: Mapping[str, Any]
    documents: Mapping[str, dict[str, Any]]  # results by peer name
    triaged: Mapping[tuple[str, str], triage.Line]  # by (peer, requirement)
    runs: Sequence[compare.Run]
    rows: Sequence[compare.Row]
    catalogue: str  # the installed suite's catalogue digest, which a column's must equal

    def failures(self) -> Iterator[tuple[Mapping[str, Any], list[Failure]]]:
        """Each peer with FAILs, and (requirement, level, its triage line or None) of each."""
        for entry in self.manifest["peers"]:
            fails = triage.fails_of(self.documents.get(entry["name"]))
            if fails:
                keyed = [(i, level, self.triaged.get((entry["name"], i))) for i, level in fails]
                yield entry, keyed

    def followers(self, peer: str) -> dict[str, list[Follower]]:
        """The FAILs of ``peer`` that follow from others, under the first of their causes that
        follows from none (the one with a triage line)."""
        document = self.documents.get(peer)
        standing = {requirement for requirement, _ in triage.fails_of(document)}
        under: dict[str, list[Follower]] = {}
        for requirement, level, causes in triage.followers_of(document):
            root = next((cause for cause in causes if cause in standing), causes[0])
            under.setdefault(root, []).append((requirement, level))
        return under


def render_pages(out: Path, catalogue: str | None = None) -> dict[str, str]:
    """Both pages, by name: pure over the folder's files and ``catalogue`` (default: the
    installed suite's catalogue digest, against which a column's record is stale or not)."""
    manifest = json.loads((out / "matrix.json").read_text(encoding="utf-8"))
    documents = results_documents(out, manifest)
    lines = {
        line.key: triage.filled(line, documents.get(line.peer))
        for line in triage.load(out / triage.FILE)
    }
    catalogue = catalogue_sha256() if catalogue is None else catalogue
    runs = [_run(entry, documents, catalogue) for entry in manifest["peers"]]
    matrix = Published(manifest, documents, lines, runs, compare.comparison_rows(runs), catalogue)
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


def _run(
    entry: Mapping[str, Any], documents: Mapping[str, dict[str, Any]], catalogue: str
) -> compare.Run:
    path = Path(entry["name"]) / "results.json"  # relative: the pages must not name a machine
    document = documents.get(entry["name"])
    label = _label(entry) + (f" ({STALE})" if stale(entry, catalogue) else "")
    if document is None:
        return compare.Run(path, {"requirements": []}, label, _absence(entry))
    return compare.Run(path, document, label)


# What each column was judged with (matrix.json's "judged_with" of a peer)

STALE = "STALE"
DIGESTS = ("catalogue", "corpus", "golden", "checks")


def judged_with(entry: Mapping[str, Any]) -> dict[str, str] | None:
    """Suite version and short digests a column was judged with, or None when not recorded."""
    record = entry.get("judged_with")
    if not isinstance(record, dict):
        return None
    shown = {"suite": str(record.get("suite_version") or "?")}
    for name in DIGESTS:
        digest = record.get(f"{name}_sha256")
        shown[name] = digest[:8] if isinstance(digest, str) and digest else "?"
    return shown


def stale(entry: Mapping[str, Any], catalogue: str) -> bool:
    """Whether a column records a catalogue other than ``catalogue`` (unrecorded: not known)."""
    record = entry.get("judged_with")
    return isinstance(record, dict) and record.get("catalogue_sha256") != catalogue


def _judged_text(entry: Mapping[str, Any]) -> str:
    shown = judged_with(entry)
    if shown is None:
        return "not recorded"
    return ", ".join(f"{name} {value}" for name, value in shown.items())


def _stale_notice(matrix: Published) -> str | None:
    names = [e["name"] for e in matrix.manifest["peers"] if stale(e, matrix.catalogue)]
    if not names:
        return None
    return (
        f"{STALE}: {plural(len(names), 'column')} ({', '.join(names)}) judged with another "
        f"requirement catalogue than this suite's ({matrix.catalogue[:8]}): their verdicts "
        "are not what the suite says today until they are rebuilt."
    )


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
    "installed from its package registry into an environment of its own and serving, offline "
    "on 127.0.0.1, the model its Model column names (all-MiniLM-L6-v2 unless it says another), "
    "judged against that model's golden where one exists. Every requirement is a row, every "
    "server a column; every FAIL has a triage line below (what the server does, why it "
    "deviates, the public issue), listed with the FAILs that follow from it. A FAIL of a SHOULD "
    "is a warning; the verdict counts MUSTs only."
)


# Markdown


def _markdown(matrix: Published) -> str:
    out = ["# Compatibility matrix", "", INTRO, "", _built_line(matrix.manifest)]
    if notice := _stale_notice(matrix):
        out += ["", f"**{markdown_text(notice)}**"]
    out += ["", f"Rebuild it with `{COMMAND}` from a clone (see the project README).", ""]
    out += ["## Peers", ""]
    out += _peer_table(matrix)
    table = compare_markdown.render_markdown(matrix.runs, matrix.rows).rstrip()
    out += ["", "## Requirements by peer", "", table, "", "## Triage", "", TRIAGE_KEY, ""]
    for entry, fails in matrix.failures():
        out += [f"### {markdown_text(_label(entry))}", ""]
        followers = matrix.followers(entry["name"])
        for cause, members in grouped(fails):
            indent = "  " if cause else ""
            if cause:
                count = _fail_count(members, followers)
                out.append(f"- **{ROOT_CAUSE}: {markdown_prose(cause)}** ({count}):")
            for i, level, line in members:
                out.append(f"{indent}- {markdown_prose(f'`{i}` ({level})')}: {_line_text(line)}")
                if i in followers:
                    out.append(f"{indent}  - {_followers_text(followers[i])}")
        out.append("")
    if not any(matrix.failures()):
        out.append("No FAIL in any column.")
    return "\n".join(out) + "\n"


# Grouping and flags of the triage

ROOT_CAUSE = "One root cause"
JUDGEMENT = "judgement call"
SETTING = "matrix setting"
FOLLOWING = "Following from it"
TRIAGE_KEY = (
    f"FAILs of one peer that follow from one root cause are listed under it. A FAIL that "
    f"another FAIL of its column left unmeasurable (FAIL (follows) in the table) says nothing "
    f"of its own: it has no line, and is listed under that one ({FOLLOWING.lower()}). "
    f"{JUDGEMENT.upper()} marks a verdict that is a judgement call (the flag that moves it is "
    f"named); {SETTING.upper()} marks a FAIL that the matrix's own configuration of the peer "
    "produced (which setting is named)."
)


def grouped(fails: Sequence[Failure]) -> list[tuple[str, list[Failure]]]:
    """FAILs in catalogue order as (cause, FAILs): those whose lines name one cause gathered
    at the first one's place, every other FAIL alone with cause ""."""
    groups: dict[tuple[str, str], list[Failure]] = {}
    for fail in fails:
        cause = fail[2].cause if fail[2] is not None else ""
        groups.setdefault((cause, "") if cause else ("", fail[0]), []).append(fail)
    return [(cause, members) for (cause, _), members in groups.items()]


def _fail_count(members: Sequence[Failure], followers: Mapping[str, list[Follower]]) -> str:
    """How many FAILs a root cause has: its lines' and those that follow from them."""
    following = [level for i, _, _ in members for _, level in followers.get(i, [])]
    levels = [level for _, level, _ in members] + following
    must = levels.count("MUST")
    return (
        f"{plural(len(levels), 'FAIL')}, {must} of them MUST"
        if must
        else plural(len(levels), "FAIL")
    )


def _followers_text(followers: Sequence[Follower]) -> str:
    named = ", ".join(f"`{requirement}` ({level})" for requirement, level in followers)
    return f"{FOLLOWING}, not measurable without it: {markdown_prose(named)}"


def _followers_html(followers: Sequence[Follower]) -> str:
    named = ", ".join(
        f"<code>{html_text(requirement)}</code> ({html_text(level)})"
        for requirement, level in followers
    )
    return f"<ul><li>{html_text(FOLLOWING)}, not measurable without it: {named}</li></ul>"


def _flags(line: triage.Line) -> list[tuple[str, str]]:
    """(flag, its text) for each flag a line carries."""
    flags = [(JUDGEMENT, line.judgement), (SETTING, line.setting)]
    return [(flag, text) for flag, text in flags if text]


def _peer_table(matrix: Published) -> list[str]:
    header = (
        "| Peer | Version | Model | What runs | Judged with | Start-up | Suite | Verdict "
        "| MUST failed | SHOULD failed |"
    )
    out = [header, "|" + " --- |" * 10]
    for entry in matrix.manifest["peers"]:
        document = matrix.documents.get(entry["name"])
        verdict = _verdict(entry, document)
        must = ", ".join(f"`{r}`" for r in _failed(document, "MUST")) or "—"
        should = ", ".join(f"`{r}`" for r in _failed(document, "SHOULD")) or "—"
        if document is None:
            must = should = "—"
        judged = markdown_text(_judged_text(entry))
        if stale(entry, matrix.catalogue):
            judged = f"**{STALE}**: {judged}"
        out.append(
            f"| {markdown_link(entry['title'], entry['homepage'])} | "
            f"{markdown_text(entry.get('version') or '—')} | "
            f"{markdown_text(served_model(document))} | "
            f"{markdown_text(entry.get('about') or '—')} | {judged} | "
            f"{_duration(entry.get('startup_s'))} | "
            f"{_duration(entry.get('suite_s'))} | {markdown_text(verdict)} | {must} | {should} |"
        )
    return out


UNREFERENCED = (
    "NOT CERTIFIED: NO REFERENCE, vectors compared with nothing (--reference none: no golden "
    "of its model; a certificate needs one); reference-free run: {verdict}"
)


GATE_ONLY = (
    "NOT CERTIFIED: THE GATE ONLY, what it changes against the server it fronts (--baseline "
    "recorded from that server; everything else is judged in its own column); gate: {verdict}"
)


def served_model(document: Mapping[str, Any] | None) -> str:
    """The model a column's server served (the name the suite asked for), "—" without a run."""
    if document is None:
        return "—"
    return str(document.get("endpoint", {}).get("model") or "—")


def _verdict(entry: Mapping[str, Any], document: Mapping[str, Any] | None) -> str:
    if document is None:
        return f"{entry['state']}: {entry.get('reason') or 'no results'}"
    if (document.get("reference") or {}).get("kind") == "none":
        return UNREFERENCED.format(verdict=document.get("verdict", "?"))
    if "baseline" in document and not document.get("certification"):
        return GATE_ONLY.format(verdict=document.get("verdict", "?"))
    certification = document.get("certification") or {}
    return "CERTIFIED" if certification.get("certified") else "NOT CERTIFIED"


def _link_word(link: str) -> str:
    return "pull request" if "/pull/" in link else "issue"


def _line_text(line: triage.Line | None) -> str:
    if line is None:
        return "**UNTRIAGED**"
    text = f"{markdown_prose(line.does)} {markdown_prose(line.why)}"
    for flag, explained in _flags(line):
        text += f" **{flag.upper()}:** {markdown_prose(explained)}"
    if line.link:
        text += f" ({markdown_link(_link_word(line.link), line.link)})"
    return text


# HTML


def _stylesheet() -> str:
    """publish.css (package data), after the compare page's own: wrapping cells keep the peer
    table within the window however many peers it lists; the triage's flags and root causes
    stand out from its prose."""
    return resources.files("conformance.matrix").joinpath("publish.css").read_text("utf-8")


FLAG_CSS = {JUDGEMENT: "judgement", SETTING: "setting", STALE: "stale"}


def _flag_html(flag: str) -> str:
    return f'<span class="flag {FLAG_CSS[flag]}">{html_text(flag)}</span>'


def _html(matrix: Published) -> str:
    e = html_text
    preface = [f"<p>{e(INTRO)}</p>", f"<p>{e(_built_line(matrix.manifest))}</p>"]
    if notice := _stale_notice(matrix):
        preface.append(f"<p>{_flag_html(STALE)} <strong>{e(notice)}</strong></p>")
    preface += ["<h2>Peers</h2>", '<table class="peers"><thead><tr><th>Peer</th>']
    preface += ["<th>Version</th><th>Model</th><th>What runs</th><th>Judged with</th>"]
    preface += ["<th>Start-up</th>"]
    preface += ["<th>Suite</th><th>Verdict</th><th>Report</th></tr></thead>", "<tbody>"]
    for entry in matrix.manifest["peers"]:
        document = matrix.documents.get(entry["name"])
        report = (
            f'<a href="{e(entry["name"])}/report.html">report</a>' if document is not None else ""
        )
        judged = e(_judged_text(entry))
        if stale(entry, matrix.catalogue):
            judged = f"{_flag_html(STALE)} {judged}"
        preface.append(
            f'<tr><td><a href="{e(entry["homepage"])}">{e(entry["title"])}</a></td>'
            f'<td class="n">{e(entry.get("version") or "—")}</td>'
            f"<td>{e(served_model(document))}</td>"
            f'<td>{e(entry.get("about") or "—")}</td><td class="judged">{judged}</td>'
            f'<td class="n">{_duration(entry.get("startup_s"))}</td>'
            f'<td class="n">{_duration(entry.get("suite_s"))}</td>'
            f'<td class="n">{e(_verdict(entry, document))}</td><td class="n">{report}</td></tr>'
        )
    preface.append("</tbody></table>")
    appendix = ["<h2>Triage</h2>", f"<p>{_triage_key_html()}</p>"]
    for entry, fails in matrix.failures():
        appendix += [f"<h3>{e(_label(entry))}</h3>", "<ul>"]
        followers = matrix.followers(entry["name"])
        for cause, members in grouped(fails):
            items = [
                f"<li><code>{e(i)}</code> ({e(level)}): {_line_html(line)}"
                + (_followers_html(followers[i]) if i in followers else "")
                + "</li>"
                for i, level, line in members
            ]
            if cause:
                head = f"<strong>{e(ROOT_CAUSE)}: {html_prose(cause)}</strong>"
                items = [
                    f'<li class="cause">{head} ({e(_fail_count(members, followers))}):<ul>',
                    *items,
                    "</ul></li>",
                ]
            appendix += items
        appendix.append("</ul>")
    return compare_html.render_html(
        matrix.runs,
        matrix.rows,
        title="Compatibility matrix",
        preface=preface,
        appendix=appendix,
        css=_stylesheet(),
    )


def _triage_key_html() -> str:
    key = html_text(TRIAGE_KEY)
    for flag in (JUDGEMENT, SETTING):
        key = key.replace(html_text(flag.upper()), _flag_html(flag), 1)
    return key


def _line_html(line: triage.Line | None) -> str:
    if line is None:
        return "<strong>UNTRIAGED</strong>"
    text = f"{html_prose(line.does)} {html_prose(line.why)}"
    for flag, explained in _flags(line):
        text += f" {_flag_html(flag)} {html_prose(explained)}"
    if line.link:
        text += f' (<a href="{html_text(line.link)}">{_link_word(line.link)}</a>)'
    return text
