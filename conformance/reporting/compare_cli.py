"""``embedding-conformance compare``: runs side by side, or the diff of two (a CI gate)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.files import write_text_atomically
from conformance.reporting import compare, compare_html, compare_markdown, compare_terminal

FORMATS = ("terminal", "markdown", "html")
EXIT_REGRESSION = 1
EXIT_USAGE = 4

HELP = "compare results.json files side by side, or diff two of them"
DESCRIPTION = (
    "Show the status of every requirement in each run (a requirement x run matrix), or with "
    "--diff what changed from run A to run B: status changes (regressions and improvements), "
    "measurements that moved by more than their limit, requirements in only one run. "
    "Exit status: 0; 1 with --diff when anything regressed; 4 for unusable arguments or files."
)


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RESULTS.json",
        help="results documents of conformance runs (--report-dir or --results-json), "
        "one column each, in this order",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="compare exactly two runs, A then B, and exit 1 when B regressed: a worse status "
        "(e.g. PASS to FAIL or UNSUPPORTED) or a measurement that grew by more than its limit",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="terminal",
        help="terminal: aligned text (default); markdown: GitHub tables; html: one "
        "self-contained page",
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="write the report to FILE (replaced atomically) instead of standard output",
    )


def render(args: argparse.Namespace, runs: list[compare.Run]) -> tuple[str, int]:
    """The report asked for, and the exit status it implies."""
    if args.diff:
        result = compare.diff(*runs)
        renderer = {
            "terminal": compare_terminal.render_diff_terminal,
            "markdown": compare_markdown.render_diff_markdown,
            "html": compare_html.render_diff_html,
        }[args.format]
        return renderer(result), EXIT_REGRESSION if result.regressions else 0
    rows = compare.comparison_rows(runs)
    if args.format == "markdown":
        return compare_markdown.render_markdown(runs, rows), 0
    if args.format == "html":
        return compare_html.render_html(runs, rows), 0
    return compare_terminal.render_terminal(runs, rows), 0


def run_compare(args: argparse.Namespace) -> int:
    if args.diff and len(args.runs) != 2:
        print(
            f"error: --diff compares exactly two runs (A B), got {len(args.runs)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        runs = compare.load_runs(args.runs)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    text, status = render(args, runs)
    if args.out is None:
        sys.stdout.write(text)
        return status
    try:
        write_text_atomically(Path(args.out), text)
    except OSError as error:
        print(f"error: cannot write {args.out}: {error}", file=sys.stderr)
        return EXIT_USAGE
    return status
