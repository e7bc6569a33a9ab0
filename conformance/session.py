"""One conformance run: its settings, the preflight, the reference, the baseline gate, the tally
of verdicts, the summary and the results file. ``plugin.py`` only hands pytest's hooks to it.

Under xdist the controller runs the preflight and resolves the settings (the model it found, the
reference it chose); each worker receives them once, as plain data, and repeats neither.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance import __version__
from conformance.builtin import builtin_transport, start_builtin
from conformance.checks.baseline import status_regressions
from conformance.client import EmbeddingsClient, parse_endpoint
from conformance.options import given_options, selects
from conformance.preflight import PreflightError, check_embeddings_route, open_client
from conformance.references import (
    GoldenError,
    ReferenceSpec,
    bundled_golden,
    load_golden,
    parse_reference,
)
from conformance.references.baseline import Baseline, load_baseline
from conformance.references.identify import identify_by_vectors
from conformance.reporting import integrity
from conformance.reporting.capabilities import judge_capabilities
from conformance.reporting.certification import certification, certify_refusals
from conformance.reporting.document import build_document, redact_options
from conformance.reporting.fingerprint import server_fingerprint
from conformance.reporting.known_failures import (
    KnownFailure,
    apply_known_failures,
    covering,
    from_json,
)
from conformance.reporting.summary import (
    final_line,
    note_lines,
    requirement_lines,
    warning_lines,
)
from conformance.reporting.tally import CHECK_KEY, REQUIREMENTS_KEY, Tally
from conformance.reporting.writer import write_reports, write_results
from conformance.requirements import BY_ID, CATALOGUE, GATE_PREFIX, Requirement, in_profile
from conformance.session_keys import SETTINGS_KEY
from conformance.settings import Settings, resolve_settings

if TYPE_CHECKING:  # started by conformance.builtin only for --endpoint builtin
    from conformance.server.process import ServerProcess

COLLECT_ONLY_URL = "http://builtin.invalid"  # collecting needs no server
KNOWN_FAILURE = "known failure: "  # the xfail reason of a test a --known-failures entry covers

NOT_COMPARED = "vectors not compared with any reference"
UNREFERENCED_RISKS = (
    "--reference none: the reference.* requirements were not run, so well-formed but wrong",
    "vectors (wrong pooling, a dropped layer, silent truncation, another model) pass unnoticed.",
)

# A line of the terminal summary: (separator character or "" for a plain line, text, markup)
SummaryLine = tuple[str, str, dict[str, bool]]


@dataclass
class ConformanceSession:
    settings: Settings
    on_worker: bool = False
    server: ServerProcess | None = None  # the built-in server this session started
    tally: Tally = field(init=False)
    client: EmbeddingsClient | None = None  # set once the preflight has passed
    reference: ReferenceSpec | None = None  # set with the client
    baseline: Baseline | None = None  # set with the client, from --baseline
    regressions: list[str] = field(default_factory=list)  # statuses worse than the baseline's
    started: float = field(default_factory=time.time)
    sign_key: Any = None  # the Ed25519 private key of --sign-key, loaded at the start
    document: dict[str, Any] | None = None  # the results document, once written
    reports: list[Path] = field(default_factory=list)  # the files written
    deselected: int = 0  # tests deselected by any means
    out_of_play: int = 0  # of which: tests of requirements not in play in this run

    def __post_init__(self) -> None:
        self.tally = Tally(r for r in CATALOGUE if self.in_play(r))
        entries = self.settings.known_failures
        self.known_failures: tuple[KnownFailure, ...] = (
            from_json(entries["entries"]) if entries else ()
        )

    # configure -----------------------------------------------------------------------------

    @classmethod
    def configure(cls, config: pytest.Config) -> ConformanceSession | None:
        """The session of this pytest run, or None when no endpoint is configured."""
        worker_input = getattr(config, "workerinput", None)
        if worker_input is not None and SETTINGS_KEY in worker_input:
            return cls(Settings.from_json(worker_input[SETTINGS_KEY]), on_worker=True)
        given = given_options(config)
        endpoint = given["endpoint"]
        if endpoint is None:
            return None
        transport = builtin_transport(endpoint)
        settings = resolve_settings(given, endpoint if transport is None else COLLECT_ONLY_URL)
        if settings.certify:
            refused = certify_refusals(settings, config)
            if refused:
                raise pytest.UsageError(
                    "embedding-conformance --certify runs every requirement against a "
                    f"reference, so it refuses: {'; '.join(refused)}"
                )
        if transport is None or config.option.collectonly:
            return cls(settings)
        server = start_builtin(transport)
        return cls(replace(settings, endpoint=parse_endpoint(server.url)), server=server)

    def in_play(self, requirement: Requirement) -> bool:
        """In the chosen profile, and for the baseline gate's requirements, given a baseline."""
        if requirement.id.startswith(GATE_PREFIX) and not self.settings.baseline:
            return False
        return in_profile(requirement, self.settings.profile)

    def chosen(self, requirement_id: str) -> bool:
        """Named by --requirements (every requirement when it is not given)."""
        patterns = self.settings.requirements
        return patterns is None or any(selects(p, requirement_id) for p in patterns)

    @property
    def model(self) -> str | None:
        return self.client.model if self.client else self.settings.model

    def worker_settings(self) -> dict[str, Any]:
        """What every xdist worker receives: the settings as the preflight resolved them."""
        reference = self.reference.spec if self.reference is not None else "none"
        return replace(self.settings, model=self.model, reference=reference).to_json()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()

    # start: preflight, reference, baseline ------------------------------------------------

    def start(self) -> None:
        """Prove the endpoint answers, then read the reference and the baseline; any problem
        is a usage error (one message, exit code 4, no test runs)."""
        s = self.settings
        try:
            client = open_client(
                s.endpoint, s.model, s.api_key, s.request_timeout, s.max_response_bytes
            )
            if not self.on_worker:
                check_embeddings_route(client)
        except PreflightError as exc:
            raise pytest.UsageError(f"embedding-conformance preflight failed: {exc}") from None
        try:
            self.reference = self._reference_for(client)
            self.baseline = load_baseline(s.baseline) if s.baseline else None
            if s.sign_key and not self.on_worker:
                self.sign_key = integrity.load_private_key(Path(s.sign_key))
        except (ValueError, GoldenError) as exc:
            raise pytest.UsageError(f"embedding-conformance: {exc}") from None
        self.client = client

    def _reference_for(self, client: EmbeddingsClient) -> ReferenceSpec | None:
        """--reference when given; else the bundled golden named like the served model; else
        the bundled golden its vectors match. None only for --reference none."""
        named = self.settings.reference
        if named is not None or bundled_golden(client.model) is not None:
            return parse_reference(named, client.model)
        return identify_by_vectors(client, self.settings.tolerances.cosine_atol)

    @property
    def unreferenced(self) -> bool:
        """Started with --reference none: the vectors are compared with nothing."""
        return self.client is not None and self.reference is None

    def header_lines(self) -> list[str]:
        s, t = self.settings, self.settings.tolerances
        model = repr(self.model) if self.model else "(first from /v1/models)"
        lines = [
            f"embedding-conformance {__version__}: {s.endpoint.embeddings_url}, model {model}",
            f"  profile {s.profile}, tier {s.precision}: --vector-atol {t.vector_atol:g} "
            f"--norm-atol {t.norm_atol:g} --base64-atol {t.base64_atol:g} "
            f"--reference-atol {t.reference_atol:g} --cosine-atol {t.cosine_atol:g}",
        ]
        if self.reference is not None:
            lines.append(f"  reference: {self.reference}")
        elif self.unreferenced:
            lines.append(f"  reference: none: {NOT_COMPARED.upper()} (--reference none)")
        if self.baseline is not None:
            lines.append(f"  baseline: {self.baseline}")
        if s.known_failures:
            lines.append(
                f"  known failures: {len(self.known_failures)} in {s.known_failures['path']}"
            )
        if s.capabilities:
            lines.append(f"  capabilities: {s.capabilities['path']}")
        outputs = [f"{s.report_dir}/ (results.json, junit.xml, report.html, summary.md, badge.svg)"]
        outputs = (outputs if s.report_dir else []) + ([s.results_json] if s.results_json else [])
        lines.append(f"  reports: {', '.join(outputs) or 'none (--report-dir DIR writes them)'}")
        if s.certify:
            lines.append("  CERTIFICATION RUN: every requirement, the full profile, a reference")
        return lines

    # collection and verdicts ----------------------------------------------------------------

    def select(self, items: Sequence[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
        """(selected, deselected): each test tagged with its requirement ids, and kept when
        one of them is in play. An unknown id is a usage error."""
        selected: list[pytest.Item] = []
        deselected: list[pytest.Item] = []
        for item in items:
            ids = [i for marker in item.iter_markers("requirement") for i in marker.args]
            unknown = [i for i in ids if i not in BY_ID]
            if unknown:
                raise pytest.UsageError(f"{item.nodeid}: unknown requirement id(s) {unknown}")
            item.user_properties.append((REQUIREMENTS_KEY, ids))
            in_scope = not ids or any(self.in_play(BY_ID[i]) and self.chosen(i) for i in ids)
            (selected if in_scope else deselected).append(item)
            if ids and not any(self.in_play(BY_ID[i]) for i in ids):
                self.out_of_play += 1  # e.g. the baseline gate's tests without --baseline
        return selected, deselected

    def record(self, report: pytest.TestReport) -> None:
        """One verdict per test: from the call phase, or from setup when it never got there.
        The requests a test sent are on its teardown report."""
        if report.when == "teardown":
            self.tally.add_timings(report.nodeid, report.user_properties)
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            outcome, reason = report.outcome, ""
            known = str(getattr(report, "wasxfail", "")).startswith(KNOWN_FAILURE)
            if known:  # judged as failed; the known-failures file decides its status at the end
                outcome = "failed"
            elif report.skipped and isinstance(report.longrepr, tuple):
                reason = report.longrepr[2].removeprefix("Skipped: ")
            error = report.longreprtext.strip().splitlines()[-1] if outcome == "failed" else ""
            self.tally.add(
                report.nodeid,
                report.user_properties,
                outcome,
                reason,
                error[:200],
                report.duration,
            )

    def mark_known_failure(self, item: pytest.Item, report: pytest.TestReport) -> None:
        """A failed test whose every failure a --known-failures entry lists becomes an xfail:
        it does not fail the run (its requirement is reported XFAIL)."""
        if not self.known_failures or report.when != "call" or not report.failed:
            return
        properties: list[tuple[str, Any]] = list(item.user_properties)
        checks = [v for k, v in properties if k == CHECK_KEY and not v["passed"]]
        if checks:
            failures = [(c["requirement"], c.get("case")) for c in checks]
        else:  # failed outside any check: every requirement of the test failed
            ids: list[str] = next((v for k, v in properties if k == REQUIREMENTS_KEY), [])
            failures = [(requirement, None) for requirement in ids]
        entry = covering(self.known_failures, failures) if failures else None
        if entry is not None:
            report.outcome = "skipped"
            report.wasxfail = KNOWN_FAILURE + entry.reason

    # the end --------------------------------------------------------------------------------

    def finish(self, config: pytest.Config) -> bool:
        """Judge the run against the baseline and write the results file (controller only).
        True when the run must fail for a regression that failed no test."""
        if self.on_worker:
            return False
        if self.baseline is not None:
            now = {r.id: "NOT RUN" for r in CATALOGUE if not r.id.startswith(GATE_PREFIX)}
            now.update((r, v.status) for r, v in self.tally.verdicts.items())
            self.regressions = status_regressions(self.baseline.statuses, now)
        apply_known_failures(self.tally, self.known_failures)
        capabilities = self.settings.capabilities
        judge_capabilities(self.tally, capabilities["declared"] if capabilities else None)
        s = self.settings
        if s.results_json is not None or s.report_dir is not None:
            self.document = self.results_document(config)
            if s.results_json is not None:
                write_results(self.document, Path(s.results_json))
            if s.report_dir is not None:
                self.reports = write_reports(self.document, Path(s.report_dir))
        stale = any(v.status == "STALE" for v in self.tally.verdicts.values())
        return bool(self.regressions) or stale  # also a PASS that became UNSUPPORTED

    def results_document(self, config: pytest.Config) -> dict[str, Any]:
        """The run as data (the layout of conformance/reporting/results.schema.json), sealed
        with its digest and, given --sign-key, signed."""
        s, finished = self.settings, time.time()
        options = redact_options(
            {k: v for k, v in s.to_json().items() if k not in ("endpoint", "tolerances")}
        )
        run = {
            "started": _iso(self.started),
            "finished": _iso(finished),
            "duration_s": round(finished - self.started, 3),
            "profile": s.profile,
            "precision": s.precision,
            "tolerances": s.tolerances.__dict__.copy(),
            "selection": {
                "requirements": list(s.requirements) if s.requirements else None,
                "keyword": config.option.keyword or None,
                "markers": config.option.markexpr or None,
                "deselected": self.deselected - self.out_of_play,  # the user's selection
            },
            "certify": s.certify,
            "known_failures": s.known_failures["path"] if s.known_failures else None,
            "capabilities": s.capabilities,
        }
        document = build_document(
            self.tally,
            run=run,
            endpoint={"url": s.endpoint.embeddings_url, "model": self.model, "options": options},
            server=server_fingerprint(self.client)  # asked only when a report is written
            if self.client is not None
            else {"models": [], "server_header": None, "version": None},
            reference=self.reference_identity(),
            extra_failure=bool(self.regressions),
        )
        if self.baseline is not None:
            document["baseline"] = {
                "path": str(self.baseline.path),
                "regressions": self.regressions,
            }
        if s.certify:
            document["certification"] = certification(document)
        return integrity.seal(document, self.sign_key)

    def reference_identity(self) -> dict[str, Any]:
        """What the vectors were compared with, precisely enough to get the same again."""
        reference = self.reference
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

    def summary(self) -> Iterator[SummaryLine]:
        """The terminal summary, in order."""
        yield "=", "embedding conformance", {}
        for line in requirement_lines(self.tally):
            yield "", line, {"red": line.startswith("FAIL"), "green": line.startswith("PASS")}
        yield from _section("notes", note_lines(self.tally), {})
        warnings = warning_lines(self.tally)
        yield from _section("SHOULD requirements not met (warnings)", warnings, {"yellow": True})
        if self.baseline is not None:
            yield "-", f"against the baseline {self.baseline.path}", {}
            lines = [f"REGRESSION {line}" for line in self.regressions] or [
                "no requirement does worse than in the baseline's run"
            ]
            for line in lines:
                yield "", line, {"red": bool(self.regressions)}
            if not self.baseline.statuses:
                yield "", "(the baseline holds no results.json: statuses not compared)", {}
        if self.reports:
            yield "-", "reports", {}
            for path in self.reports:
                yield "", str(path), {}
        if self.document is not None and "certification" in self.document:
            verdict = self.document["certification"]
            word = "CERTIFIED" if verdict["certified"] else "NOT CERTIFIED"
            yield (
                "",
                f"{word}: " + ("; ".join(verdict["reasons"]) or "every MUST passed"),
                {"bold": True, "green": verdict["certified"], "red": not verdict["certified"]},
            )
        final = final_line(self.tally)
        if self.unreferenced:
            yield "-", NOT_COMPARED, {}
            for line in UNREFERENCED_RISKS:
                yield "", line, {"red": True}
            final += f"; {NOT_COMPARED}"
        yield "", final, {"bold": True}


def _iso(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return moment.isoformat(timespec="seconds")


def _section(title: str, lines: list[str], markup: dict[str, bool]) -> Iterator[SummaryLine]:
    if lines:
        yield "-", title, {}
        for line in lines:
            yield "", line, markup
