"""A bad endpoint ends the run with one clear message and the usage-error exit code."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.conftest import API_KEY
from tests.support.suite_runner import SuiteRun, run_suite

USAGE_ERROR = 4


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def assert_one_clear_error(run: SuiteRun, *phrases: str) -> None:
    assert run.returncode == USAGE_ERROR, run.output
    lines = [line for line in run.output.splitlines() if "preflight failed" in line]
    assert len(lines) == 1, run.output
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    assert "passed" not in run.output and "FAILED" not in run.output


def test_refused_connection(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", f"http://127.0.0.1:{free_port()}")
    assert_one_clear_error(run, "no usable answer from the endpoint", "Connection refused")


def test_missing_credentials(auth_server: str, tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", auth_server)
    assert_one_clear_error(run, "HTTP 401", "--api-key", "EMBEDDINGS_API_KEY")


def test_wrong_credentials_are_never_printed(auth_server: str, tmp_path: Path) -> None:
    run = run_suite(
        tmp_path,
        "--endpoint",
        auth_server,
        "--model",
        "all-MiniLM-L6-v2",
        env={"EMBEDDINGS_API_KEY": "sk-wrong-key-4711"},
    )
    assert_one_clear_error(run, "HTTP 401")
    assert "sk-wrong-key-4711" not in run.output


def test_credentials_from_the_environment_are_used(auth_server: str, tmp_path: Path) -> None:
    run = run_suite(
        tmp_path,
        "--endpoint",
        auth_server,
        "--conformance-profile",
        "core",
        "-k",
        "envelope",
        env={"EMBEDDINGS_API_KEY": API_KEY},
    )
    assert run.returncode == 0, run.output
    assert "Authorization: Bearer $EMBEDDINGS_API_KEY" not in run.output  # nothing failed


def test_html_page_instead_of_an_api(hostile_server: str, tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", f"{hostile_server}/captive-portal")
    assert_one_clear_error(run, "text/html", "not JSON")


def test_unknown_model(clean_server: str, tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", clean_server, "--model", "no-such-model")
    assert_one_clear_error(run, "does not know model 'no-such-model'", "HTTP 404")


def test_models_route_absent_asks_for_model(hostile_server: str, tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", f"{hostile_server}/no-models")
    assert_one_clear_error(run, "could not list models", "--model NAME")


def test_models_route_absent_is_fine_with_model(hostile_server: str, tmp_path: Path) -> None:
    run = run_suite(
        tmp_path,
        "--endpoint",
        f"{hostile_server}/no-models/v1",
        "--model",
        "hostile-model",
        "--reference",
        "none",
        "-k",
        "envelope",
    )
    assert run.returncode == 0, run.output  # the preflight passed and the tests ran


def test_full_embeddings_url_is_accepted(clean_server: str, tmp_path: Path) -> None:
    run = run_suite(
        tmp_path,
        "--endpoint",
        f"{clean_server}/v1/embeddings",
        *("--requirements", "envelope."),  # the URL is what is tested: a few requirements do
    )
    assert run.returncode == 0, run.output
