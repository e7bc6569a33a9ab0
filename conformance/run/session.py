"""One conformance run: its settings, the preflight, the reference, the baseline gate, the tally
of verdicts, the summary and the results file. ``plugin.py`` only hands pytest's hooks to it.

Under xdist the controller runs the preflight and resolves the settings (the model it found, the
reference it chose); each worker receives them once, as plain data, and repeats neither. The
controller also asks the state canary (``conformance.run.canary``) before any test, hands its answer
to the workers, and asks it again once every worker has finished.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.client import EmbeddingsClient, parse_endpoint
from conformance.client.preflight import PreflightError, check_embeddings_route, open_client
from conformance.options import given_options
from conformance.references import GoldenError, ReferenceSpec
from conformance.references.baseline import Baseline, load_baseline
from conformance.references.identify import DimensionFailure, choose_reference
from conformance.reporting import integrity
from conformance.reporting.terminal import SummaryLine, summary_lines
from conformance.reporting.writer import write_run
from conformance.requirements import CATALOGUE
from conformance.run.builtin import builtin_transport, start_builtin
from conformance.run.canary import STATE, FirstAnswer, StateCanary
from conformance.run.certify import refuse_uncertifiable
from conformance.run.expect import check_record
from conformance.run.fingerprint import server_fingerprint
from conformance.run.hypothesis_home import leave_home, take_home
from conformance.run.outcomes import (
    add_report,
    excuse_known_failure,
    fail_before_any_test,
)
from conformance.run.report import NO_SERVER, header_lines, results_document, run_section
from conformance.run.selection import chosen, in_play, select
from conformance.run.session_keys import CANARY_KEY, SETTINGS_KEY
from conformance.run.settings import Settings, resolve_settings
from conformance.run.termination import default_again, end_like_ctrl_c
from conformance.verdicts.certification import certification
from conformance.verdicts.judge import fails_for_rules, judge_run
from conformance.verdicts.known_failures import from_json
from conformance.verdicts.records import Certification, KnownFailure
from conformance.verdicts.tally import Tally

if TYPE_CHECKING:  # started by conformance.run.builtin only for --endpoint builtin
    from conformance.server.process import ServerProcess

COLLECT_ONLY_URL = "http://builtin.invalid"  # collecting needs no server
IDENTIFICATION = "reference identification"  # the 'test' of a verdict given while identifying


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
    certification: Certification | None = None  # with the document, given --certify
    reports: list[Path] = field(default_factory=list)  # the files written
    deselected: int = 0  # tests deselected by any means
    out_of_play: int = 0  # of which: tests of requirements not in play in this run
    # The run's verdict given before any test: identifying the reference found no fixed
    # dimension (a FAIL of that dimension requirement); no test runs.
    dimension_failure: DimensionFailure | None = None
    canary: StateCanary = field(default_factory=StateCanary)  # state.unchanged's

    def __post_init__(self) -> None:
        self.tally = Tally(r for r in CATALOGUE if in_play(self.settings, r))
        end_like_ctrl_c()  # so that stop runs also when the run is ended by SIGTERM
        self.hypothesis_home = take_home()  # not ./.hypothesis: removed at stop
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
            settings = Settings.from_json(worker_input[SETTINGS_KEY])
            first = FirstAnswer.from_json(worker_input.get(CANARY_KEY))
            return cls(settings, on_worker=True, canary=StateCanary(first))
        given = given_options(config)
        endpoint = given["endpoint"]
        if endpoint is None:
            return None
        transport = builtin_transport(endpoint)
        settings = resolve_settings(given, endpoint if transport is None else COLLECT_ONLY_URL)
        if settings.certify:
            refuse_uncertifiable(settings, config)
        if transport is None or config.option.collectonly:
            return cls(settings)
        server = start_builtin(transport, settings.model)
        return cls(replace(settings, endpoint=parse_endpoint(server.url)), server=server)

    @property
    def model(self) -> str | None:
        return self.client.model if self.client else self.settings.model

    def worker_settings(self) -> dict[str, Any]:
        """What every xdist worker receives: the settings as the preflight resolved them."""
        reference: str | None = self.reference.spec if self.reference is not None else "none"
        if self.dimension_failure is not None:  # each worker identifies, fails, runs nothing
            reference = self.settings.reference
        return replace(self.settings, model=self.model, reference=reference).to_json()

    def worker_canary(self) -> dict[str, Any] | None:
        """What every xdist worker receives besides: the state canary's first answer."""
        first = self.canary.first
        return None if first is None else first.to_json()

    def stop(self) -> None:
        leave_home(self.hypothesis_home)
        if self.server is not None:
            self.server.stop()
        default_again()

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
            try:
                self.reference = choose_reference(s.reference, client, s.tolerances.cosine_atol)
                # the tier's limits of the reference's model, where the project measured it
                named = self.reference.model if self.reference is not None else None
                self.settings = s.for_model(named or client.model)
            except DimensionFailure as failure:  # the run's verdict: no test runs (select)
                self.dimension_failure = failure
                record = check_record(failure.requirement, failure.result, failure.exchange)
                fail_before_any_test(self.tally, IDENTIFICATION, record)
            self.baseline = load_baseline(s.baseline) if s.baseline else None
            if s.sign_key and not self.on_worker:
                self.sign_key = integrity.load_private_key(Path(s.sign_key))
        except (ValueError, GoldenError) as exc:
            raise pytest.UsageError(f"embedding-conformance: {exc}") from None
        self.client = client
        if not self.on_worker and STATE in self.tally.verdicts and chosen(self.settings, STATE):
            self.canary.start(client, self.tally)

    @property
    def unreferenced(self) -> bool:
        """Started with --reference none: the vectors are compared with nothing."""
        return self.client is not None and self.reference is None and not self.dimension_failure

    def header_lines(self) -> list[str]:
        known = len(self.known_failures)
        lines = header_lines(
            self.settings, self.model, self.reference, self.unreferenced, self.baseline, known
        )
        if self.dimension_failure is not None:
            failed = self.dimension_failure.requirement
            lines.append(f"  reference: none identified: {failed} FAILED, no test runs")
        return lines

    # collection and verdicts ----------------------------------------------------------------

    def select(self, items: Sequence[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
        """(selected, deselected): see ``selection.select``; nothing runs when the run's
        verdict was given while identifying the reference."""
        if self.dimension_failure is not None:
            return [], list(items)
        selected, deselected, self.out_of_play = select(self.settings, items)
        return selected, deselected

    def record(self, report: pytest.TestReport) -> None:
        add_report(self.tally, report)
        self.canary.heard(report)

    def mark_known_failure(self, item: pytest.Item, report: pytest.TestReport) -> None:
        excuse_known_failure(self.known_failures, item, report)

    # the end --------------------------------------------------------------------------------

    def finish(self, config: pytest.Config) -> bool:
        """Judge the run (baseline, known failures, capabilities) and write the results file
        (controller only), after asking the state canary one last time. True when the run must
        fail for what failed no test: a regression, or the canary at the end."""
        if self.on_worker:
            return False
        self.canary.finish(self.client, self.tally, self.settings.tolerances.vector_atol)
        self.count_own_requests()
        capabilities = self.settings.capabilities
        self.regressions = judge_run(
            self.tally,
            self.baseline.statuses if self.baseline is not None else None,
            self.known_failures,
            capabilities["declared"] if capabilities else None,
        )
        results_json, report_dir = self.settings.results_json, self.settings.report_dir
        if results_json is not None or report_dir is not None:
            self.document = self.results_document(config)
            self.reports = write_run(self.document, results_json, report_dir)
        return (
            fails_for_rules(self.tally, self.regressions)
            or self.canary.failed(self.tally)
            or self.dimension_failure is not None
        )

    def results_document(self, config: pytest.Config) -> dict[str, Any]:
        """The run as data (conformance/reporting/results.schema.json), sealed and signed."""
        if self.settings.certify:
            referenced = self.reference is not None
            self.certification = certification(self.tally, self.regressions, referenced)
        selected = self.deselected - self.out_of_play  # deselected by the user's selection
        # the server is asked only when a report is written, and before the count closes
        server = server_fingerprint(self.client) if self.client is not None else dict(NO_SERVER)
        self.count_own_requests()
        return results_document(
            self.tally,
            self.settings,
            run_section(self.settings, config, self.started, selected),
            model=self.model,
            server=server,
            reference=self.reference,
            regressions=self.regressions,
            baseline=None if self.baseline is None else self.baseline.path,
            certification=self.certification,
            sign_key=self.sign_key,
        )

    def count_own_requests(self) -> None:
        """Add to the run's count what this process's client sent that no test's report took:
        the preflight's and the state canary's under xdist; in one process, whatever came
        after the last test."""
        if self.client is not None:
            self.tally.requests += self.client.request_count.take()

    def summary(self) -> Iterator[SummaryLine]:
        """The terminal summary, in order."""
        baseline = self.baseline
        lines = summary_lines(
            self.tally,
            baseline=None if baseline is None else (baseline.path, bool(baseline.statuses)),
            regressions=self.regressions,
            reports=self.reports,
            certification=self.certification,
            unreferenced=self.unreferenced,
        )
        return self.canary.summary(lines)
