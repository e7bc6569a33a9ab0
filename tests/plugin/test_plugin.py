"""Plugin mechanics, through pytester: inert by default, options, markers, the catalogue."""

from __future__ import annotations

import pytest

from conformance.requirements import CATALOGUE, GATE_PREFIX

UNREACHABLE = "http://127.0.0.1:9"  # collect-only runs never contact the endpoint

IN_PLAY = [r for r in CATALOGUE if not r.id.startswith(GATE_PREFIX)]  # no --baseline


def test_inert_without_endpoint(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_own(): assert True")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    assert "embedding conformance" not in result.stdout.str()
    assert "embedding-conformance 0" not in result.stdout.str()  # no report header


def test_help_lists_every_option(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    for flag in (
        "--endpoint",
        "--model",
        "--api-key",
        "--request-timeout",
        "--conformance-profile",
        "--precision",
        "--expect-dim",
        "--expect-normalized",
        "--results-json",
    ):
        result.stdout.fnmatch_lines([f"*{flag}*"])
    result.stdout.fnmatch_lines(["*embeddings_endpoint*"])  # ini keys, too


def test_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.requirement(*ids)*"])


def collected(pytester: pytest.Pytester, *args: str) -> list[pytest.Item]:
    """The items a run would execute (after deselection); collect-only skips the preflight."""
    recorder = pytester.inline_run("--collect-only", *args)
    (call,) = recorder.getcalls("pytest_collection_finish")
    return list(call.session.items)


def collected_requirements(pytester: pytest.Pytester, *args: str) -> dict[str, list[str]]:
    # With a baseline (never read when only collecting) the gate's tests are in play too.
    items = collected(pytester, "--endpoint", UNREACHABLE, "--baseline", "unread", *args)
    return {
        item.nodeid: [i for m in item.iter_markers("requirement") for i in m.args] for item in items
    }


def test_every_requirement_has_a_test_and_every_test_a_known_requirement(
    pytester: pytest.Pytester,
) -> None:
    by_test = collected_requirements(pytester)
    assert by_test, "the packaged suite collected nothing"
    assert all(by_test.values()), [t for t, ids in by_test.items() if not ids]
    covered = {i for ids in by_test.values() for i in ids}
    assert covered == {r.id for r in CATALOGUE}


def test_packaged_suite_replaces_the_projects_own_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_own="def test_own(): pass")
    by_test = collected_requirements(pytester)
    assert not any("test_own" in nodeid for nodeid in by_test)


def test_named_paths_are_respected(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_own="def test_own(): pass")
    items = collected(pytester, "--endpoint", UNREACHABLE, "test_own.py")
    assert [item.name for item in items] == ["test_own"]


def test_unknown_requirement_id_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.requirement("no.such-requirement")
        def test_bad(): pass
    """
    )
    result = pytester.runpytest_subprocess(
        "--endpoint", UNREACHABLE, "--collect-only", "test_bad.py"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown requirement id(s) ['no.such-requirement']" in result.stderr.str()


def test_core_profile_deselects_the_rest(pytester: pytest.Pytester) -> None:
    by_test = collected_requirements(pytester, "--conformance-profile", "core")
    covered = {i for ids in by_test.values() for i in ids}
    assert covered == {r.id for r in CATALOGUE if r.profile == "core"}


def test_keyword_selection_works_on_the_packaged_suite(pytester: pytest.Pytester) -> None:
    by_test = collected_requirements(pytester, "-k", "base64")
    assert by_test and all("base64" in nodeid for nodeid in by_test)


def header(pytester: pytest.Pytester, *args: str) -> str:
    result = pytester.runpytest_subprocess("--collect-only", *args)
    return result.stdout.str()


def test_precedence_cli_over_env_over_ini(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini(
        f"[pytest]\nembeddings_endpoint = {UNREACHABLE}\nembeddings_precision = bf16\n"
    )
    assert "tier bf16" in header(pytester)
    monkeypatch.setenv("EMBEDDINGS_PRECISION", "fp16")
    assert "tier fp16" in header(pytester)
    assert "tier fp32" in header(pytester, "--precision", "fp32")


def test_tolerance_override_from_the_command_line(pytester: pytest.Pytester) -> None:
    out = header(
        pytester, "--endpoint", UNREACHABLE, "--precision", "fp16", "--vector-atol", "0.25"
    )
    assert "--vector-atol 0.25 --norm-atol 0.005 --base64-atol 0.002" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--endpoint", "localhost:8000"), "is not an http(s) URL"),
        (("--endpoint", UNREACHABLE, "--expect-dim", "zero"), "--expect-dim"),
        (("--endpoint", UNREACHABLE, "--expect-normalized", "maybe"), "expected yes or no"),
        (("--endpoint", UNREACHABLE, "--request-timeout", "-1"), "must be > 0"),
    ],
)
def test_bad_option_values_are_usage_errors(
    pytester: pytest.Pytester, args: tuple[str, ...], message: str
) -> None:
    result = pytester.runpytest_subprocess("--collect-only", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


VERDICTS_FILE = """
import pytest

from conformance.checks.result import CheckResult
from conformance.run.expect import unsupported


@pytest.mark.requirement("usage.monotonic-length")
def test_should_failure(expect):
    expect(CheckResult(False, 3, "== 0", -3.0, "planted"))


@pytest.mark.requirement("dimension.expected")
def test_unsupported(expect):
    unsupported("declined with HTTP 400")


@pytest.mark.requirement("finite.values")
def test_must_failure(expect):
    expect(CheckResult(False, 1, "== 0", -1.0, "planted NaN"))
"""


def test_verdicts_warnings_and_exit_codes(clean_server: str, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_verdicts=VERDICTS_FILE)
    endpoint = clean_server
    should_only = pytester.runpytest_subprocess(
        "--endpoint", endpoint, "test_verdicts.py", "-k", "not must", "--junitxml", "junit.xml"
    )
    assert should_only.ret == 0  # a SHOULD failure warns, an UNSUPPORTED passes
    should_only.stdout.fnmatch_lines(
        [
            "UNSUPPORTED*MUST*dimension.expected*declined with HTTP 400",
            "FAIL * SHOULD usage.monotonic-length*",
            "*SHOULD requirements not met (warnings)*",
            "SHOULD usage.monotonic-length: *planted*",
            "conformance: 0 passed, 0 failed, 1 unsupported, 0 not applicable, "
            f"{len(IN_PLAY) - 2} not run (1 SHOULD warning)",
        ]
    )
    junit = (pytester.path / "junit.xml").read_text()
    assert 'name="conformance.check"' in junit and 'name="conformance.requirements"' in junit

    # the user's warning filters do not change a verdict: -W error, or filterwarnings = error
    pytester.makeini("[pytest]\nfilterwarnings = error\n")
    for extra in ((), ("-W", "error")):
        strict = pytester.runpytest_subprocess(
            "--endpoint", endpoint, "test_verdicts.py", "-k", "not must", *extra
        )
        assert strict.ret == 0, strict.stdout.str()
        strict.stdout.fnmatch_lines(["FAIL * SHOULD usage.monotonic-length*", "*1 SHOULD warning)"])

    with_must = pytester.runpytest_subprocess("--endpoint", endpoint, "test_verdicts.py")
    assert with_must.ret == pytest.ExitCode.TESTS_FAILED
    with_must.stdout.fnmatch_lines(["FAIL * MUST * finite.values *", "*[[]MUST finite.values[]]*"])
