"""report.html: one self-contained page (no network: inline CSS, SVG drawn here, a few lines of
inline JS) from a results document. This module is the page's frame: the verdict, the run, the
counts, the footer; ``html_requirements`` and ``html_plots`` render the sections between.

Every string of the document goes through ``esc``: server answers are hostile input. The page's
Content-Security-Policy allows no fetch at all and only the script whose hash it names, so even
a slip in escaping could neither load nor run anything.
"""

from __future__ import annotations

import base64
import hashlib

from conformance.reporting import style
from conformance.reporting.escape import html_text as esc
from conformance.reporting.html_plots import plots
from conformance.reporting.html_requirements import (
    FAILED,
    FILTER_SCRIPT,
    failures_section,
    requirement_table,
)
from conformance.reporting.results import Results
from conformance.reporting.wording import duration_text, plural
from conformance.verdicts.status import Status

STYLE = style.stylesheet("report.css")


def fail_reasons(results: Results) -> list[str]:
    """What made the run FAIL, one line per cause."""
    requirements = results.requirements
    failed = [r.id for r in requirements if r.status is Status.FAIL and r.level == "MUST"]
    stale = [r.id for r in requirements if r.status is Status.STALE]
    regressions = results.regressions
    reasons = []
    if failed:
        reasons.append(f"{plural(len(failed), 'MUST requirement')} failed: " + ", ".join(failed))
    if stale:
        reasons.append(
            f"{plural(len(stale), 'known failure')} now passing (stale): " + ", ".join(stale)
        )
    if regressions:
        reasons.append("baseline regressions: " + ", ".join(regressions))
    return reasons


def banner(results: Results) -> str:
    verdict = results.verdict
    model = results.model or "unknown model"
    warnings = sum(r.is_warning for r in results.requirements)
    if verdict is Status.PASS:
        lines = ["Every MUST requirement that ran passed."]
    else:
        lines = fail_reasons(results) or ["The run failed."]
    if warnings:
        lines.append(f"{plural(warnings, 'SHOULD requirement')} failed: warnings, not failures.")
    certification = ""
    if results.certification is not None:
        certified = results.certification.certified
        reasons = "".join(f"<li>{esc(r)}</li>" for r in results.certification.reasons)
        certification = (
            f'<div class="cert {"yes" if certified else "no"}">'
            f"{'CERTIFIED' if certified else 'NOT CERTIFIED'}"
            + (f"<ul>{reasons}</ul>" if reasons else "")
            + "</div>"
        )
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    return (
        f'<header class="banner {esc(verdict.lower())}"><div class="verdict">{esc(verdict)}</div>'
        f'<div class="about"><div class="model">{esc(model)}</div>'
        f'<div class="sub">embedding-conformance {esc(results.suite["version"])} · '
        f"{esc(results.endpoint['url'])}</div><ul>{items}</ul></div>"
        f"{certification}</header>"
    )


def no_reference_notice(results: Results) -> str:
    if results.referenced:
        return ""
    return (
        '<div class="notice"><strong>No reference model.</strong> The vectors were compared with '
        "nothing: this run shows the endpoint speaks the API, not that it computes the right "
        "embeddings. Run with --reference to check the numbers.</div>"
    )


def definition_list(rows: list[tuple[str, str]]) -> str:
    items = "".join(f"<dt>{esc(key)}</dt><dd>{value}</dd>" for key, value in rows if value)
    return f"<dl>{items}</dl>"


def code(value: object) -> str:
    return f"<code>{esc(value)}</code>" if value not in (None, "") else ""


def metadata(results: Results) -> str:
    endpoint, server, reference = results.endpoint, results.server, results.reference
    run, suite = results.run, results.suite
    tolerances = "<br>".join(
        f"{esc(k)} {esc(f'{v:g}')}" for k, v in sorted(run.get("tolerances", {}).items())
    )
    selection = run.get("selection", {})
    narrowed = "; ".join(
        f"{key} {', '.join(value) if isinstance(value, list) else value}"
        for key, value in selection.items()
        if value not in (None, 0, [])
    )
    options = "".join(
        f"<tr><th>{esc(key)}</th><td>{esc(value)}</td></tr>"
        for key, value in sorted(endpoint.get("options", {}).items())
        if value is not None
    )
    cards = {
        "Endpoint": [
            ("URL", code(endpoint["url"])),
            ("Model", esc(endpoint.get("model") or "—")),
            (
                "Options",
                f"<details><summary>{len(endpoint.get('options', {}))} resolved options</summary>"
                f'<table class="kv">{options}</table></details>'
                if options
                else "",
            ),
        ],
        "Server": [
            ("Models", esc(", ".join(server.get("models", [])) or "—")),
            ("Server header", esc(server.get("server_header") or "—")),
            ("Version", esc(server.get("version") or "—")),
        ],
        "Reference": [
            ("Kind", esc(reference["kind"])),
            ("Description", esc(reference.get("description", ""))),
            ("Spec", code(reference.get("spec"))),
            ("Source", esc(reference.get("source") or "")),
            ("sha256", code(reference.get("sha256"))),
        ],
        "Run": [
            ("Profile", esc(run.get("profile", ""))),
            ("Precision", esc(run.get("precision", ""))),
            ("Tolerances", tolerances),
            ("Selection", esc(narrowed or "complete run")),
            ("Started", esc(run.get("started", ""))),
            ("Duration", esc(duration_text(float(run.get("duration_s", 0.0))))),
            ("Known failures", code(run.get("known_failures"))),
            ("Baseline", code(results.baseline_path)),
            ("Suite", esc(f"{suite['name']} {suite['version']}")),
            ("Catalogue", code(suite.get("catalogue_sha256"))),
        ],
    }
    return (
        '<section class="meta">'
        + "".join(
            f'<div class="card"><h3>{esc(name)}</h3>{definition_list(rows)}</div>'
            for name, rows in cards.items()
        )
        + "</section>"
    )


def counts_strip(results: Results) -> str:
    counts = results.counts
    cells = "".join(
        f'<div class="count {count.css}{" zero" if not counts.get(count.key) else ""}">'
        f"<b>{esc(counts.get(count.key, 0))}</b><span>{esc(count.word)}</span></div>"
        for count in style.COUNTS
    )
    return f'<section class="counts">{cells}</section>'


def jump_links(results: Results) -> str:
    failing = sum(r.status in FAILED for r in results.requirements)
    links = [("requirements-section", "Requirements"), ("measurements", "Measurements")]
    links += [("failures", f"Failures ({failing})")] if failing else []
    anchors = "".join(f'<a href="#{target}">{name}</a>' for target, name in links)
    return f'<nav class="jump">Jump to: {anchors}</nav>'


def footer(results: Results) -> str:
    integrity = results.integrity
    digest = integrity.get("digest", {}).get("value")
    signature = integrity.get("signature")
    parts = [f"results format {esc(results.format)}"]
    if digest:
        parts.append(f"sha256 {code(digest)}")
    if signature:
        parts.append(f"signed (ed25519, key {code(signature['public_key'])})")
    return f"<footer>{' · '.join(parts)}</footer>"


def content_security_policy() -> str:
    """No fetch of any kind, and no script but the filter script, named by its hash."""
    digest = hashlib.sha256(FILTER_SCRIPT.encode("utf-8")).digest()
    script = base64.b64encode(digest).decode("ascii")
    return (
        f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script}'; "
        "img-src data:; form-action 'none'; base-uri 'none'"
    )


def render_html(results: Results) -> str:
    """report.html for ``results``: the verdict, the run, every requirement, plots, failures."""
    title = f"embedding-conformance: {results.verdict} — {results.model or 'unknown model'}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy()}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>\n{STYLE}</style></head><body><main>"
        + banner(results)
        + no_reference_notice(results)
        + metadata(results)
        + counts_strip(results)
        + jump_links(results)
        + requirement_table(results)
        + plots(results)
        + failures_section(results)
        + footer(results)
        + f"</main><script>{FILTER_SCRIPT}</script></body></html>\n"
    )
