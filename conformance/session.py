"""One conformance run: its settings, the preflight, the reference, the baseline gate, the tally
of verdicts, the summary and the results file. ``plugin.py`` only hands pytest's hooks to it.

Under xdist the controller runs the preflight and resolves the settings (the model it found, the
reference it chose); each worker receives them once, as plain data, and repeats neither.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from conformance import __version__
from conformance.builtin import builtin_transport, start_builtin
from conformance.checks.baseline import status_regressions
from conformance.client import EmbeddingsClient, parse_endpoint
from conformance.options import Settings, given_options, resolve_settings, selects
from conformance.preflight import PreflightError, check_embeddings_route, open_client
from conformance.references import GoldenError, ReferenceSpec, bundled_golden, parse_reference
from conformance.references.baseline import Baseline, load_baseline
from conformance.references.identify import identify_by_vectors
from conformance.reporting.summary import (
    final_line,
    note_lines,
    requirement_lines,
    results_document,
    warning_lines,
)
from conformance.reporting.tally import REQUIREMENTS_KEY, Tally
from conformance.requirements import BY_ID, CATALOGUE, GATE_PREFIX, Requirement, in_profile
from conformance.server.process import ServerProcess

SETTINGS_KEY = "conformance_settings"  # in xdist's workerinput: the controller's settings
COLLECT_ONLY_URL = "http://builtin.invalid"  # collecting needs no server

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

    def __post_init__(self) -> None:
        self.tally = Tally(r for r in CATALOGUE if self.in_play(r))

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
        if transport is None:
            return cls(resolve_settings(given, endpoint))
        settings = resolve_settings(given, COLLECT_ONLY_URL)  # options checked before a start
        if config.option.collectonly:
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
            f"  profile {s.profile}, precision {s.precision}: --vector-atol {t.vector_atol:g} "
            f"--norm-atol {t.norm_atol:g} --base64-atol {t.base64_atol:g} "
            f"--reference-atol {t.reference_atol:g} --cosine-atol {t.cosine_atol:g}",
        ]
        if self.reference is not None:
            lines.append(f"  reference: {self.reference}")
        elif self.unreferenced:
            lines.append(f"  reference: none: {NOT_COMPARED.upper()} (--reference none)")
        if self.baseline is not None:
            lines.append(f"  baseline: {self.baseline}")
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
        return selected, deselected

    def record(self, report: pytest.TestReport) -> None:
        """One verdict per test: from the call phase, or from setup when it never got there."""
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            reason = ""
            if report.skipped and isinstance(report.longrepr, tuple):
                reason = report.longrepr[2].removeprefix("Skipped: ")
            error = report.longreprtext.strip().splitlines()[-1] if report.failed else ""
            self.tally.add(
                report.nodeid, report.user_properties, report.outcome, reason, error[:200]
            )

    # the end --------------------------------------------------------------------------------

    def finish(self) -> bool:
        """Judge the run against the baseline and write the results file (controller only).
        True when the run must fail for a regression that failed no test."""
        if self.on_worker:
            return False
        if self.baseline is not None:
            now = {r.id: "NOT RUN" for r in CATALOGUE if not r.id.startswith(GATE_PREFIX)}
            now.update((r, v.status) for r, v in self.tally.verdicts.items())
            self.regressions = status_regressions(self.baseline.statuses, now)
        if self.settings.results_json is not None:
            self._write_results(Path(self.settings.results_json))
        return bool(self.regressions)  # also a PASS that became UNSUPPORTED

    def _write_results(self, path: Path) -> None:
        header = {
            "endpoint": self.settings.endpoint.embeddings_url,
            "model": self.model,
            "profile": self.settings.profile,
            "precision": self.settings.precision,
            "version": __version__,
        }
        document = results_document(self.tally, header)
        if self.baseline is not None:
            document["baseline"] = {
                "path": str(self.baseline.path),
                "regressions": self.regressions,
            }
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")

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
        final = final_line(self.tally)
        if self.unreferenced:
            yield "-", NOT_COMPARED, {}
            for line in UNREFERENCED_RISKS:
                yield "", line, {"red": True}
            final += f"; {NOT_COMPARED}"
        yield "", final, {"bold": True}


def _section(title: str, lines: list[str], markup: dict[str, bool]) -> Iterator[SummaryLine]:
    if lines:
        yield "-", title, {}
        for line in lines:
            yield "", line, markup


SESSION_KEY = pytest.StashKey[ConformanceSession]()


def session_of(config: pytest.Config) -> ConformanceSession | None:
    return config.stash.get(SESSION_KEY, None)
