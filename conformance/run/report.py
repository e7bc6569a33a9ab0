"""What a session reports of its run besides the verdicts: the terminal header (what runs
against what), and the results document (settings, selection, reference, the server's own
description around the verdicts), sealed with its digest and, given a key, signed. The
document's layout is ``reporting/results.schema.json``; ``reporting.document`` lays it out."""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import Any

import pytest

from conformance import __version__
from conformance.references import ReferenceSpec, load_golden
from conformance.references.baseline import Baseline
from conformance.reporting import integrity
from conformance.reporting.document import build_document, redact_options
from conformance.reporting.terminal import NOT_COMPARED
from conformance.run.settings import Settings
from conformance.verdicts.records import Certification
from conformance.verdicts.tally import Tally

NO_SERVER: dict[str, Any] = {"models": [], "server_header": None, "version": None}
REPORTS = "results.json, junit.xml, report.html, summary.md, badge.svg"


def header_lines(
    settings: Settings,
    model: str | None,
    reference: ReferenceSpec | None,
    unreferenced: bool,
    baseline: Baseline | None,
    known_failures: int,
) -> list[str]:
    """What the run tests, against what, with which limits, and where the reports go."""
    s, t = settings, settings.tolerances
    shown_model = repr(model) if model else "(first from /v1/models)"
    own = f" as measured for {s.tier_model}" if s.tier_model else ""
    lines = [
        f"embedding-conformance {__version__}: {s.endpoint.embeddings_url}, model {shown_model}",
        f"  profile {s.profile}, tier {s.precision}{own}: --vector-atol {t.vector_atol:g} "
        f"--norm-atol {t.norm_atol:g} --base64-atol {t.base64_atol:g} "
        f"--reference-atol {t.reference_atol:g} --cosine-atol {t.cosine_atol:g} "
        f"--cosine-median-atol {t.cosine_median_atol:g} --retrieval-tie {t.retrieval_tie:g}",
    ]
    if reference is not None:
        lines.append(f"  reference: {reference}")
    elif unreferenced:
        lines.append(f"  reference: none: {NOT_COMPARED.upper()} (--reference none)")
    if baseline is not None:
        lines.append(f"  baseline: {baseline}")
    if s.known_failures:
        lines.append(f"  known failures: {known_failures} in {s.known_failures['path']}")
    if s.capabilities:
        lines.append(f"  capabilities: {s.capabilities['path']}")
    outputs = ([f"{s.report_dir}/ ({REPORTS})"] if s.report_dir else []) + (
        [s.results_json] if s.results_json else []
    )
    lines.append(f"  reports: {', '.join(outputs) or 'none (--report-dir DIR writes them)'}")
    if s.certify:
        lines.append("  CERTIFICATION RUN: every requirement, the full profile, a reference")
    return lines


def run_section(
    settings: Settings, config: pytest.Config, started: float, deselected: int
) -> dict[str, Any]:
    """When and how the run ran; ``deselected``: the tests the user's selection left out."""
    s, finished = settings, time.time()
    return {
        "started": _iso(started),
        "finished": _iso(finished),
        "duration_s": round(finished - started, 3),
        "profile": s.profile,
        "precision": s.precision,
        "tier_model": s.tier_model,
        "tolerances": s.tolerances.__dict__.copy(),
        "selection": {
            "requirements": list(s.requirements) if s.requirements else None,
            "keyword": config.option.keyword or None,
            "markers": config.option.markexpr or None,
            "deselected": deselected,
        },
        "certify": s.certify,
        "known_failures": s.known_failures["path"] if s.known_failures else None,
        "capabilities": s.capabilities,
    }


def reference_identity(reference: ReferenceSpec | None) -> dict[str, Any]:
    """What the vectors were compared with, precisely enough to get the same again."""
    if reference is None:
        return {
            "kind": "none",
            "spec": "none",
            "name": None,
            "sha256": None,
            "source": None,
            "description": NOT_COMPARED,
        }
    golden = reference.golden
    if golden is None and reference.kind == "golden":
        golden = load_golden(Path(reference.location))
    files = golden.manifest.get("files", {}) if golden is not None else {}
    return {
        "kind": reference.kind,
        "spec": reference.spec,
        "name": golden.model if golden is not None else Path(reference.location).name,
        "sha256": files.get("vectors.npy", {}).get("sha256"),
        "source": golden.source if golden is not None else reference.location,
        "description": reference.label,
    }


def results_document(
    tally: Tally,
    settings: Settings,
    run: dict[str, Any],
    *,
    model: str | None,
    server: dict[str, Any],
    reference: ReferenceSpec | None,
    regressions: list[str],
    baseline: Path | None,
    certification: Certification | None,
    sign_key: Any = None,
) -> dict[str, Any]:
    """The run as data, sealed with its digest and, given ``sign_key``, signed; ``server``:
    how it described itself (``fingerprint.server_fingerprint``)."""
    options = {k: v for k, v in settings.to_json().items() if k not in ("endpoint", "tolerances")}
    endpoint = {
        "url": settings.endpoint.embeddings_url,
        "model": model,
        "options": redact_options(options),
    }
    document = build_document(
        tally,
        run=run,
        endpoint=endpoint,
        server=server,
        reference=reference_identity(reference),
        regressions=regressions,
        baseline=None if baseline is None else str(baseline),
        certification=certification,
    )
    return integrity.seal(document, sign_key)


def _iso(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return moment.isoformat(timespec="seconds")
