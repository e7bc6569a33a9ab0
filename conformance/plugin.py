"""The pytest plugin: hooks only, each handing its work to the run's ConformanceSession.

Loaded for every pytest run in an environment where the package is installed (``pytest11``
entry point), so without ``--endpoint`` it registers its options and markers and does nothing
else: it imports only what registering them needs (``options``, ``session_keys``,
``tolerances``). The session, and with it the client, the checks, the references, the reporting,
numpy and requests, is imported once a run has an endpoint to test.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.options import add_options, given_options
from conformance.run.session_keys import (
    CANARY_KEY,
    SESSION_KEY,
    SETTINGS_KEY,
    has_worker_settings,
    session_of,
)

if TYPE_CHECKING:
    from conformance.run.session import ConformanceSession

SUITE_DIR = Path(__file__).parent / "suite"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "requirement(*ids): the conformance requirement ids a test covers"
    )
    if given_options(config)["endpoint"] is None and not has_worker_settings(config):
        return  # not a conformance run: nothing more is imported
    from conformance.run.session import ConformanceSession

    session = ConformanceSession.configure(config)
    if session is None:
        return
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(VerdictRecorder(session), "conformance-verdicts")
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # No paths named: run the packaged suite, not the project's own tests.
        config.args = [str(SUITE_DIR)]
    config.pluginmanager.import_plugin("conformance.suite.pytest_fixtures")
    config.pluginmanager.import_plugin("conformance.suite.shape_fixtures")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker receives the settings the controller's preflight resolved, and the
    state canary's first answer."""
    session = session_of(node.config)
    if session is not None:
        node.workerinput[SETTINGS_KEY] = session.worker_settings()
        node.workerinput[CANARY_KEY] = session.worker_canary()


def pytest_unconfigure(config: pytest.Config) -> None:
    session = session_of(config)
    if session is not None:
        session.stop()


@pytest.hookimpl(tryfirst=True)  # before xdist starts its workers: they need the result
def pytest_sessionstart(session: pytest.Session) -> None:
    conformance = session_of(session.config)
    if conformance is not None and not session.config.option.collectonly:
        conformance.start()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    session = session_of(config)
    return session.header_lines() if session is not None else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    session = session_of(config)
    if session is None:
        return
    selected, deselected = session.select(items)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected


class VerdictRecorder:
    """Feeds every test report (also those xdist workers send back) into the session's tally."""

    def __init__(self, session: ConformanceSession) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.session.record(report)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.session.deselected += len(items)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        self.session.mark_known_failure(item, outcome.get_result())


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    session = session_of(config)
    if session is None or not session.tally.ran_anything:
        return
    for separator, text, markup in session.summary():
        if separator:
            terminalreporter.write_sep(separator, text)
        else:
            terminalreporter.write_line(text, **markup)


def pytest_sessionfinish(session: pytest.Session) -> None:
    conformance = session_of(session.config)
    if conformance is not None and conformance.finish(session.config):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
