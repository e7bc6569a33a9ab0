"""The reports of a run, end to end against the bundled reference server: every file written and
valid, a certificate that holds, signatures that catch edits and wrong keys, no secret in any
output (read from the session's one certification run: tests/support/certified_run.py); known
failures, declared capabilities and compare as a user drives them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import jsonschema
import pytest

from conformance import __version__
from conformance.cli import main
from conformance.reporting.document import schema
from conformance.suite.reference_corpus import within_context
from tests.conftest import API_KEY, FaultRoute
from tests.e2e.test_suite_verdicts import IN_PLAY
from tests.reporting.test_report_browser import PNG_SIGNATURE, run_chromium
from tests.support.certified_run import REPORT_DIR, CertifiedRun, certified_run, write_keys
from tests.support.suite_runner import SuiteRun, run_suite

FILES = ("results.json", "junit.xml", "report.html", "summary.md", "badge.svg")
FAST = ("--fuzz-examples", "30")


@pytest.fixture(scope="module")
def certified(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> tuple[SuiteRun, CertifiedRun]:
    """The session's one full certification run with a real API key, signed (through the
    action: tests/support/certified_run.py): (the run as the suite printed it, its files)."""
    server = partial(request.getfixturevalue, "auth_server")  # started only if this makes the run
    run = certified_run(tmp_path_factory, server, API_KEY)
    return run.suite(), run


@pytest.mark.slow
def test_a_certification_run_writes_every_report(
    certified: tuple[SuiteRun, CertifiedRun],
) -> None:
    run, files = certified
    assert run.returncode == 0, run.output
    for name in FILES:
        assert (files.reports / name).stat().st_size > 200, name
    document = json.loads((files.reports / "results.json").read_text())
    jsonschema.Draft202012Validator(schema()).validate(document)
    assert document["certification"] == {"certified": True, "reasons": []}
    assert document["verdict"] == "PASS" and document["counts"]["failed"] == 0
    # the correct server on shared memory passes every requirement in play
    assert run.with_status("PASS") == IN_PLAY, run.output
    assert f"conformance: {len(IN_PLAY)} passed, 0 failed" in run.output
    assert document["reference"]["kind"] == "golden" and len(document["reference"]["sha256"]) == 64
    assert document["server"]["models"] == ["all-MiniLM-L6-v2"]
    assert (
        len(document["series"]["agreement"]) == len(within_context())
        and document["series"]["latency"]
    )
    assert "CERTIFIED: every MUST passed" in run.output
    assert f"reports: {REPORT_DIR}/ (results.json, junit.xml" in run.output  # the header says where


@pytest.mark.slow
def test_the_real_report_renders_in_chromium(
    certified: tuple[SuiteRun, CertifiedRun], tmp_path: Path
) -> None:
    """The certified run's own report.html, screenshotted (kept in
    $EMBEDDING_CONFORMANCE_SCREENSHOT_DIR when set, for a human look)."""
    _, files = certified
    png = tmp_path / "real-report.png"
    done = run_chromium(tmp_path, files.reports / "report.html", f"--screenshot={png}")
    assert png.exists(), done.stderr[-2000:]
    assert png.read_bytes().startswith(PNG_SIGNATURE) and png.stat().st_size > 100_000
    keep = os.environ.get("EMBEDDING_CONFORMANCE_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(keep) / png.name)


@pytest.mark.slow
def test_no_api_key_in_any_output(certified: tuple[SuiteRun, CertifiedRun]) -> None:
    run, files = certified
    assert API_KEY not in run.output  # the action's whole log
    for name in FILES:
        assert API_KEY not in (files.reports / name).read_text(), name
    options = json.loads((files.reports / "results.json").read_text())["endpoint"]["options"]
    assert options["api_key"] == "<redacted>"


@pytest.mark.slow
def test_verify_catches_an_edited_byte_and_a_wrong_key(
    certified: tuple[SuiteRun, CertifiedRun], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, files = certified
    results = files.reports / "results.json"
    public = files.public_key
    assert main(["verify", str(results), "--public-key", str(public)]) == 0
    assert "signature ok: Ed25519, by the given public key" in capsys.readouterr().out

    _, stranger = write_keys(tmp_path)
    assert main(["verify", str(results), "--public-key", str(stranger)]) == 1
    assert "ANOTHER KEY" in capsys.readouterr().out

    text = results.read_text()
    at = re.search(r'"measured": \d', text).end() - 1  # type: ignore[union-attr]  # a digit
    edited = tmp_path / "edited.json"
    edited.write_text(text[:at] + ("1" if text[at] != "1" else "2") + text[at + 1 :])
    assert main(["verify", str(edited), "--public-key", str(public)]) == 1
    assert "digest MISMATCH" in capsys.readouterr().out


def test_certify_refuses_a_narrowed_run(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--endpoint", "http://127.0.0.1:9", "--certify", "-k", "envelope")
    assert run.returncode == 4, run.output
    assert "--certify runs every requirement against a reference, so it refuses: -k" in run.output
    run = run_suite(
        tmp_path,
        *("--endpoint", "http://127.0.0.1:9", "--certify", "--reference", "none"),
        *("--conformance-profile", "core"),
    )
    assert run.returncode == 4, run.output
    assert "--conformance-profile core; --reference none" in run.output


def known_failures(folder: Path, *entries: tuple[str, str]) -> Path:
    path = folder / "known-failures.toml"
    tables = [
        f'[[known-failure]]\nrequirement = "{requirement}"\nreason = "{reason}"\n'
        'link = "https://example.com/issues/1"\n'
        for requirement, reason in entries
    ]
    path.write_text("\n".join(tables))
    return path


def test_known_failures_are_xfail_and_a_fixed_one_is_stale(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    listed = known_failures(
        tmp_path,
        ("normalization.unit-norm", "raw hidden states, fix due in 2.1"),
        ("envelope.object-list", "was a bare list before 1.4"),  # passes now
    )
    chosen = ("--requirements", "normalization.unit-norm,envelope.object-list")
    url = fault_route("no-normalize")
    stale = run_suite(tmp_path, "--endpoint", url, *chosen, "--known-failures", str(listed))
    listed_only_open = known_failures(tmp_path, ("normalization.unit-norm", "raw states"))
    only_open = ("--known-failures", str(listed_only_open))
    kept = run_suite(tmp_path, "--endpoint", url, *chosen, *only_open)
    assert stale.returncode == 1, stale.output
    assert stale.status("normalization.unit-norm") == "XFAIL", stale.output
    assert stale.status("envelope.object-list") == "STALE", stale.output
    assert "STALE       MUST   envelope.object-list" in stale.output
    assert kept.returncode == 0, kept.output
    assert kept.status("normalization.unit-norm") == "XFAIL", kept.output


def test_a_known_failure_naming_an_unknown_requirement_is_a_usage_error(tmp_path: Path) -> None:
    listed = known_failures(tmp_path, ("envelope.no-such-thing", "typo"))
    run = run_suite(tmp_path, "--endpoint", "http://127.0.0.1:9", "--known-failures", str(listed))
    assert run.returncode == 4, run.output
    assert "unknown requirement 'envelope.no-such-thing'" in run.output


def test_a_declared_capability_refused_fails_an_undeclared_one_is_unsupported(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    declared = tmp_path / "capabilities.toml"
    declared.write_text("[capabilities]\ntoken_ids = true\ndimensions = false\n")
    silent = tmp_path / "none-declared.toml"
    silent.write_text("[capabilities]\nnormalized = true\n")
    chosen = ("--requirements", "input.token-ids")
    url = fault_route("token-ids-rejected")
    undeclared = run_suite(tmp_path, "--endpoint", url, *chosen, "--capabilities", str(silent))
    promised = run_suite(tmp_path, "--endpoint", url, *chosen, "--capabilities", str(declared))
    assert undeclared.returncode == 0, undeclared.output
    assert undeclared.status("input.token-ids") == "UNSUPPORTED", undeclared.output
    assert promised.returncode == 1, promised.output
    assert promised.status("input.token-ids") == "FAIL", promised.output
    assert "but --capabilities declares token_ids" in promised.output
    entry = next(r for r in promised.results["requirements"] if r["id"] == "input.token-ids")  # type: ignore[index]
    assert entry["capability"] == {
        "name": "token_ids",
        "declared": True,
        "judgement": "declared, and FAILS",
    }


COMPARED = ("--requirements", "normalization.,base64.,envelope.", *FAST)
FAULTS = {  # fault -> the requirement that must show FAIL in its column
    "no-normalize": "normalization.unit-norm",
    "base64-ignored": "base64.honoured",
    "wrong-index": "envelope.index-order",
}


def test_compare_shows_the_clean_run_and_three_fault_runs(
    fault_route: FaultRoute, tmp_path: Path
) -> None:
    paths = []
    for name in ("clean", *FAULTS):
        folder = tmp_path / name
        folder.mkdir()
        url = fault_route(None if name == "clean" else name)
        run = run_suite(folder, "--endpoint", url, *COMPARED)
        assert run.results is not None, run.output
        paths.append(str(folder / "results.json"))
    markdown = tmp_path / "matrix.md"
    assert main(["compare", *paths, "--format", "markdown", "--out", str(markdown)]) == 0
    rows = {
        line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")[3:-1]]
        for line in markdown.read_text().splitlines()
        if line.startswith("| ") and "." in line.split("|")[1] and "NOT RUN" not in line
    }
    assert len(rows) == 12, rows  # envelope.* (7), normalization.* (1), base64.* (4)
    for folder in ("clean", *FAULTS):  # runs of one server are told apart by their folders
        label = f"uvicorn {__version__} (all-MiniLM-L6-v2) \\[{folder}/results.json\\]"
        assert label in markdown.read_text(), markdown.read_text()  # (brackets escaped)
    for column, (fault, requirement) in enumerate(FAULTS.items(), start=1):
        assert "FAIL" in rows[requirement][column], (fault, rows[requirement])
        assert "PASS" in rows[requirement][0], rows[requirement]  # the clean run
    assert all("PASS" in cells[0] for cells in rows.values()), rows
    diff = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "compare", "--diff", paths[0], paths[1]],
        capture_output=True,
        text=True,
    )
    assert diff.returncode == 1, diff.stdout + diff.stderr  # a regression
    assert "normalization.unit-norm" in diff.stdout and "PASS" in diff.stdout


def test_a_503_after_a_rejected_request_fails_with_the_retries_shown_in_every_report(
    tmp_path: Path, fault_route: FaultRoute
) -> None:
    """errors.recovers judges the first answer after a bad request: the 503 a client's
    retries would absorb fails it, with the retries that client needed in the message; every
    request sent again is counted under the test's requirement, in each report."""
    reports = tmp_path / "reports"
    chosen = ("--requirements", "errors.recovers", "-k", "malformed or nested")
    url = fault_route("503-after-rejection")
    run = run_suite(tmp_path, "--endpoint", url, "--report-dir", str(reports), *chosen)
    assert run.returncode == 1, run.output
    assert run.status("errors.recovers") == "FAIL"
    assert "measured HTTP 503 vs allowed HTTP 200 with an embeddings envelope" in run.output
    assert "a client that retries asked again 2 times and got HTTP 200" in run.output
    shown = "4 requests retried after a 429 or 503"  # 2 tests, each a 503 judged, 2 retried
    assert f"errors.recovers: {shown}" in run.output
    final = next(line for line in run.output.splitlines() if line.startswith("conformance: "))
    assert final.endswith(f"; {shown}"), final
    (entry,) = [
        r
        for r in json.loads((reports / "results.json").read_text())["requirements"]
        if r["id"] == "errors.recovers"
    ]
    assert entry["retries"] == 4
    assert "errors.recovers: 4" in (reports / "summary.md").read_text()
    assert shown in (reports / "report.html").read_text()
