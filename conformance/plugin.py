"""The pytest plugin: hooks only. Inert unless an endpoint is configured.

Loaded for every pytest run in an environment where the package is installed (``pytest11``
entry point), so without ``--endpoint`` it registers its options and markers and does nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance import __version__
from conformance.builtin import builtin_transport, start_builtin
from conformance.checks.baseline import status_regressions
from conformance.client import EmbeddingsClient
from conformance.options import OPTIONS, add_options, endpoint_given, raw_value, resolve_settings
from conformance.preflight import PreflightError, check_embeddings_route, discover_model
from conformance.references import GoldenError, parse_reference
from conformance.references.baseline import load_baseline
from conformance.reporting.summary import (
    final_line,
    note_lines,
    requirement_lines,
    results_document,
    warning_lines,
)
from conformance.reporting.tally import REQUIREMENTS_KEY
from conformance.requirements import BY_ID
from conformance.run import RUN_KEY, ConformanceRun
from conformance.server.process import ServerProcess

SUITE_DIR = Path(__file__).parent / "suite"
BUILTIN_KEY = pytest.StashKey[ServerProcess]()
BUILTIN_URL_KEY = "conformance_builtin_url"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "requirement(*ids): the conformance requirement ids a test covers"
    )
    if not endpoint_given(config):
        return
    run = config.stash[RUN_KEY] = ConformanceRun(resolve_settings(config, _builtin_url(config)))
    config.pluginmanager.register(VerdictRecorder(run), "conformance-verdicts")
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # No paths named: run the packaged suite, not the project's own tests.
        config.args = [str(SUITE_DIR)]
    config.pluginmanager.import_plugin("conformance.suite.fixtures")


def _builtin_url(config: pytest.Config) -> str | None:
    """Start the bundled server for '--endpoint builtin...' (once: xdist workers reuse it)."""
    transport = builtin_transport(raw_value(config, OPTIONS[0]) or "")
    if transport is None:
        return None
    worker_input = getattr(config, "workerinput", None)
    if worker_input is not None:
        return str(worker_input[BUILTIN_URL_KEY])
    if config.option.collectonly:
        return "http://builtin.invalid"  # collecting needs no server
    server = config.stash[BUILTIN_KEY] = start_builtin(transport)
    return server.url


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: hand the built-in server's URL to every worker."""
    run = _run(node.config)
    if run is not None:
        node.workerinput[BUILTIN_URL_KEY] = run.settings.endpoint.embeddings_url


def pytest_unconfigure(config: pytest.Config) -> None:
    server = config.stash.get(BUILTIN_KEY, None)
    if server is not None:
        server.stop()


def _run(config: pytest.Config) -> ConformanceRun | None:
    return config.stash.get(RUN_KEY, None)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    run = _run(session.config)
    if run is None or session.config.option.collectonly:
        return
    settings = run.settings
    client = EmbeddingsClient(
        settings.endpoint,
        settings.model or "",
        settings.api_key,
        settings.request_timeout,
        settings.max_response_bytes,
    )
    try:
        if not settings.model:
            client.model = discover_model(client)
        check_embeddings_route(client)
    except PreflightError as exc:
        # A usage error: one message, exit code 4, no test runs.
        raise pytest.UsageError(f"embedding-conformance preflight failed: {exc}") from None
    try:
        run.reference = parse_reference(settings.reference, client.model)
        run.baseline = load_baseline(settings.baseline) if settings.baseline else None
    except (ValueError, GoldenError) as exc:
        raise pytest.UsageError(f"embedding-conformance: {exc}") from None
    run.client = client


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    run = _run(config)
    if run is None:
        return None
    s = run.settings
    t = s.tolerances
    model = repr(run.model) if run.model else "(first from /v1/models)"
    lines = [
        f"embedding-conformance {__version__}: {s.endpoint.embeddings_url}, model {model}",
        f"  profile {s.profile}, precision {s.precision}: --vector-atol {t.vector_atol:g} "
        f"--norm-atol {t.norm_atol:g} --base64-atol {t.base64_atol:g} "
        f"--reference-atol {t.reference_atol:g} --cosine-atol {t.cosine_atol:g}",
    ]
    if run.client is not None:
        lines.append(
            f"  reference: {run.reference or 'none (give --reference to compare vectors)'}"
        )
    if run.baseline is not None:
        lines.append(f"  baseline: {run.baseline}")
    return lines


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    run = _run(config)
    if run is None:
        return
    selected: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    for item in items:
        ids = [i for marker in item.iter_markers("requirement") for i in marker.args]
        unknown = [i for i in ids if i not in BY_ID]
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: unknown requirement id(s) {unknown}")
        item.user_properties.append((REQUIREMENTS_KEY, ids))
        in_scope = not ids or any(run.in_play(BY_ID[i]) for i in ids)
        (selected if in_scope else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected


class VerdictRecorder:
    """Feeds every test report (also those xdist workers send back) into the run's tally."""

    def __init__(self, run: ConformanceRun) -> None:
        self.run = run

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # One verdict per test: from the call phase, or from setup when it never got there.
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            reason = ""
            if report.skipped and isinstance(report.longrepr, tuple):
                reason = report.longrepr[2].removeprefix("Skipped: ")
            error = report.longreprtext.strip().splitlines()[-1] if report.failed else ""
            self.run.tally.add(
                report.nodeid, report.user_properties, report.outcome, reason, error[:200]
            )


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    run = _run(config)
    if run is None or not run.tally.ran_anything:
        return
    terminalreporter.write_sep("=", "embedding conformance")
    for line in requirement_lines(run.tally):
        markup = {"red": line.startswith("FAIL"), "green": line.startswith("PASS")}
        terminalreporter.write_line(line, **markup)
    notes = note_lines(run.tally)
    if notes:
        terminalreporter.write_sep("-", "notes")
        for line in notes:
            terminalreporter.write_line(line)
    warnings = warning_lines(run.tally)
    if warnings:
        terminalreporter.write_sep("-", "SHOULD requirements not met (warnings)")
        for line in warnings:
            terminalreporter.write_line(line, yellow=True)
    if run.baseline is not None:
        terminalreporter.write_sep("-", f"against the baseline {run.baseline.path}")
        for line in run.regressions or ["no requirement does worse than in the baseline's run"]:
            terminalreporter.write_line(
                f"REGRESSION {line}" if run.regressions else line, red=bool(run.regressions)
            )
        if not run.baseline.statuses:
            terminalreporter.write_line(
                "(the baseline holds no results.json: statuses not compared)"
            )
    terminalreporter.write_line(final_line(run.tally), bold=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    run = _run(session.config)
    if run is None or hasattr(session.config, "workerinput"):
        return
    if run.baseline is not None:
        now = {r: v.status for r, v in run.tally.verdicts.items()}
        run.regressions = status_regressions(run.baseline.statuses, now)
        if run.regressions:  # also a PASS that became UNSUPPORTED, which fails no test
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if run.settings.results_json is None:
        return
    header = {
        "endpoint": run.settings.endpoint.embeddings_url,
        "model": run.model,
        "profile": run.settings.profile,
        "precision": run.settings.precision,
        "version": __version__,
    }
    document = results_document(run.tally, header)
    if run.baseline is not None:
        document["baseline"] = {"path": str(run.baseline.path), "regressions": run.regressions}
    Path(run.settings.results_json).write_text(json.dumps(document, indent=2), encoding="utf-8")
