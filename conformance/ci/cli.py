"""``embedding-conformance ci``: the GitHub Action's steps (action.yml) as commands.

Each reads its inputs as options, where an empty value means "not given" (the action passes
every input, set or not), writes the job summary and the step's outputs into the files the
runner names ($GITHUB_STEP_SUMMARY, $GITHUB_OUTPUT; printed when unset) and exits as the step
should end: 0 on a passing run, non-zero on a failing one."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.ci import github, outcome, serve
from conformance.files import write_text_atomically
from conformance.references.baseline import RESULTS

EXIT_USAGE = 4


def add_ci_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="ci_action", metavar="ACTION", required=True)

    run = actions.add_parser(
        "run",
        help="run the suite, write the job summary and the step's outputs",
        description="Run the suite against --endpoint with --report-dir, away from the "
        "workspace's own pytest configuration and conftest.py; append summary.md (or why "
        "nothing was judged) to the job summary; set the outputs verdict (PASS, FAIL, "
        "UNREACHABLE, ERROR), must-passed, must-failed, certified and results. Exit status: "
        "the suite's.",
    )
    run.add_argument("--endpoint", required=True, help="base URL of the endpoint")
    run.add_argument("--report-dir", required=True, type=Path, help="where the reports go")
    run.add_argument("--model", default="", help="model name (default: the first listed)")
    run.add_argument("--reference", default="", help="as the suite's --reference")
    run.add_argument("--precision", default="", help="as the suite's --precision")
    run.add_argument("--known-failures", default="", help="as the suite's --known-failures")
    run.add_argument(
        "--certify", default="false", type=_flag, help="'true': a --certify run (default false)"
    )
    run.add_argument(
        "--baseline",
        default="",
        help="a baseline directory (a golden recorded from the old server, with its "
        "results.json) or a results.json, as the suite's --baseline",
    )
    run.add_argument(
        "--save-baseline",
        default="",
        help="after the run, record this server's vectors and this run's results.json into "
        "this directory: the baseline of a later run",
    )
    run.add_argument(
        "--pytest-args", default="", help="further pytest options, one string (shell words)"
    )

    baseline = actions.add_parser(
        "baseline",
        help="diff this run's results.json with a baseline's, regressions first",
        description="Write the Markdown diff of the baseline's results.json and this run's to "
        "--out and to the job summary; set the outputs regressed (true/false) and diff. Exit "
        "1 when anything regressed.",
    )
    baseline.add_argument("--baseline", required=True, help="baseline directory or results.json")
    baseline.add_argument("--results", required=True, type=Path, help="this run's results.json")
    baseline.add_argument("--out", required=True, type=Path, help="the Markdown diff's file")

    start = actions.add_parser(
        "serve",
        help="start a server command and wait until it is ready",
        description="Start --command (a shell command line) in a process group of its own, "
        "output to --log, and wait until --ready answers HTTP 200. Exit 1, with the end of the "
        "log, if it exits or is not ready within --timeout.",
    )
    start.add_argument("--command", required=True, help="the command that serves the endpoint")
    start.add_argument("--ready", required=True, help="the URL that answers 200 once it serves")
    start.add_argument("--timeout", type=float, default=900.0, help="seconds (default 900)")
    start.add_argument("--log", required=True, type=Path, help="the server's output")
    start.add_argument("--pid-file", required=True, type=Path, help="for 'ci stop'")

    stop = actions.add_parser(
        "stop",
        help="stop the server 'ci serve' started, with all it spawned",
        description="Stop the process group --pid-file names (SIGTERM, then SIGKILL).",
    )
    stop.add_argument("--pid-file", required=True, type=Path, help="as given to 'ci serve'")


def _flag(value: str) -> bool:
    if value.strip().lower() in ("", "false", "0", "no"):
        return False
    if value.strip().lower() in ("true", "1", "yes"):
        return True
    raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")


def run_ci(args: argparse.Namespace) -> int:
    handlers = {"run": _run, "baseline": _baseline, "serve": _serve, "stop": _stop}
    return handlers[args.ci_action](args)


def suite_arguments(args: argparse.Namespace) -> list[str]:
    """The suite's command line for the action's inputs (empty ones left out)."""
    argv = ["--endpoint", args.endpoint, "--report-dir", str(args.report_dir)]
    for option, value in (
        ("--model", args.model),
        ("--reference", args.reference),
        ("--precision", args.precision),
        ("--known-failures", args.known_failures),
        ("--baseline", args.baseline),
    ):
        if value:
            argv += [option, value]
    if args.certify:
        argv.append("--certify")
    return argv + shlex.split(args.pytest_args)


def _run(args: argparse.Namespace) -> int:
    results = args.report_dir / RESULTS
    began = time.time()
    code, output = _pytest(suite_arguments(args))
    fresh = results.exists() and results.stat().st_mtime >= began - 1
    if fresh:
        result = outcome.from_results(json.loads(results.read_text(encoding="utf-8")))
        summary = args.report_dir / "summary.md"
        github.append_summary(summary.read_text(encoding="utf-8") if summary.exists() else "")
    else:  # the preflight failed, or another usage error: nothing was judged
        result = outcome.without_results(output)
        github.append_summary(outcome.summary_without_results(result))
    github.set_outputs(result.outputs(str(results) if fresh else ""))
    if fresh and args.save_baseline:
        saved = _save_baseline(args, results)
        code = code or saved
    return code


def _pytest(argv: list[str]) -> tuple[int, str]:
    """Run the suite in a child pytest, its output streamed through and kept. The workspace's
    pytest.ini, pyproject options and conftest.py are the project's own (a vLLM checkout has
    all three): an empty ini and --noconftest keep them out of the run."""
    with tempfile.TemporaryDirectory(prefix="ec-ci-") as scratch:
        ini = Path(scratch) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        isolated = ["-c", str(ini), "--rootdir", scratch, "--noconftest", "-p", "no:cacheprovider"]
        command = [sys.executable, "-m", "pytest", *isolated, *argv]
        print("$ pytest " + shlex.join(argv), flush=True)
        lines = []
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        ) as child:
            assert child.stdout is not None
            for line in child.stdout:
                sys.stdout.write(line)
                lines.append(line)
        sys.stdout.flush()
        return child.returncode, "".join(lines)


def _save_baseline(args: argparse.Namespace, results: Path) -> int:
    """Record the endpoint's vectors into --save-baseline and put the run's results.json
    beside them: the upgrade gate's baseline (docs/references.md), made while this server still
    serves."""
    target = Path(args.save_baseline)
    record = [sys.executable, "-m", "conformance.cli", "golden", "record", "--quiet", "--force"]
    record += ["--from-endpoint", args.endpoint, "--out", str(target)]
    record += ["--model", args.model] if args.model else []
    code = subprocess.run(record).returncode
    if code == 0:
        shutil.copyfile(results, target / RESULTS)
        print(f"baseline saved in {target}")
    return code


def baseline_results(path: str) -> Path:
    """A baseline's results.json: the file itself, or the one in a baseline directory."""
    given = Path(path)
    return given / RESULTS if given.is_dir() else given


def _baseline(args: argparse.Namespace) -> int:
    from conformance.reporting import compare, compare_markdown

    before = baseline_results(args.baseline)
    try:
        runs = compare.load_runs([str(before), str(args.results)])
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    difference = compare.diff(*runs)
    markdown = compare_markdown.render_diff_markdown(difference)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(args.out, markdown)
    github.append_summary(f"### embedding-conformance: compared with the baseline\n\n{markdown}")
    regressed = bool(difference.regressions)
    github.set_outputs({"regressed": str(regressed).lower(), "diff": str(args.out)})
    print(markdown, end="")
    return 1 if regressed else 0


def _serve(args: argparse.Namespace) -> int:
    try:
        seconds = serve.start(args.command, args.ready, args.timeout, args.log, args.pid_file)
    except serve.ServeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{args.ready} answers after {seconds:.0f} s (log: {args.log})")
    return 0


def _stop(args: argparse.Namespace) -> int:
    stopped = serve.stop(args.pid_file)
    print("server stopped" if stopped else f"no server to stop ({args.pid_file} absent)")
    return 0
