"""``embedding-conformance matrix``: list the peers, build the matrix, render or check it."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from conformance.matrix import environments, peers

EXIT_PROBLEM = 1
EXIT_USAGE = 4


def add_matrix_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="matrix_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="list the peers and whether each is installed")
    build = actions.add_parser(
        "build",
        help="install, start and judge each peer, then render the matrix",
        description="For each peer, one after another: install its environment when missing "
        "(under --cache), start it on 127.0.0.1, wait until it is ready, run the full suite "
        "with --certify and --report-dir, stop it and everything it spawned (also on failure "
        "or Ctrl-C). Then publish into --out: each peer's results.json and report.html, "
        "matrix.json, README.md and index.html. Columns of peers not named keep their "
        "earlier results and their record of what judged them. Exit 1 when a FAIL has no "
        "triage line or a column is stale.",
    )
    build.add_argument(
        "names", nargs="*", metavar="PEER", help="peers to run (default: every peer)"
    )
    install = actions.add_parser(
        "install",
        help="install the peers' environments, start none",
        description="Install the environments the named peers (default: every peer) run in, "
        "under --cache, as a build would; environments already installed are kept. A later "
        "build finds them ready. Exit 1 when an install fails (its log is named).",
    )
    install.add_argument(
        "names", nargs="*", metavar="PEER", help="peers to install (default: every peer)"
    )
    render = actions.add_parser(
        "render", help="render README.md and index.html again (after editing triage.toml)"
    )
    check = actions.add_parser(
        "check",
        help="check a published matrix: digests, staleness, triage, pages up to date",
        description="Exit 1 when a results.json differs from the digest matrix.json records "
        "or from its own integrity digest, a column is stale (judged with another requirement "
        "catalogue, corpus, golden or suite version than the installed suite's, or with no "
        "record of it), a FAIL has no triage line (or a line no FAIL), or README.md / "
        "index.html are not what the files render to.",
    )
    gate = actions.add_parser(
        "gate",
        help="the upgrade gate between two peers (e.g. two vLLM releases)",
        description="Start OLD, record it as a baseline (golden record --from-endpoint, and "
        "the suite's results), stop it; start NEW and run the suite with --baseline. Writes "
        "before.json, after.json and gate.md (the gate's verdict, regressions, the diff) into "
        "--out. Exit 1 when NEW regressed or fails a MUST.",
    )
    gate.add_argument("old", metavar="OLD", help="the peer that serves now (the baseline)")
    gate.add_argument("new", metavar="NEW", help="the peer to upgrade to")
    for action in (listing, build, install, gate):
        action.add_argument(
            "--peers",
            metavar="FILE",
            type=Path,
            help="the peers (TOML; default: the peers.toml shipped in conformance.matrix)",
        )
        action.add_argument(
            "--cache",
            metavar="DIR",
            type=Path,
            help="where the peers' environments, logs and scratch folders live "
            "(default: ~/.cache/embedding-conformance/peers)",
        )
    for action in (build, render, check):
        action.add_argument(
            "--out",
            metavar="DIR",
            type=Path,
            required=True,
            help="the published matrix folder (the project's is docs/compatibility)",
        )
    gate.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        required=True,
        help="where before.json, after.json and gate.md go (the project's is "
        "docs/compatibility/gate)",
    )


def run_matrix(args: argparse.Namespace) -> int:
    if args.matrix_command in ("render", "check"):
        return _render(args.out) if args.matrix_command == "render" else _check(args.out)
    try:
        catalogue = peers.load(args.peers)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    root = args.cache or environments.cache_root()
    if args.matrix_command == "list":
        for peer in catalogue.peers:
            state = peer.unavailable or _installed(catalogue, peer, root)
            print(f"{peer.name:<26} {peer.title:<34} {state}")
        return 0
    if args.matrix_command == "gate":
        return _gate(catalogue, args.old, args.new, args.out, root)
    if args.matrix_command == "install":
        return _install(catalogue, args.names, root)
    return _build(catalogue, args.names, args.out, root)


def _gate(catalogue: peers.Catalogue, old: str, new: str, out: Path, root: Path) -> int:
    from conformance.matrix.build import say_now
    from conformance.matrix.gate import gate

    try:
        return gate(catalogue, old, new, out, root, say_now)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:  # a peer failed
        print(f"error: the gate could not run: {exc}", file=sys.stderr)
        return EXIT_PROBLEM
    except KeyboardInterrupt:
        print("interrupted: every started peer was stopped")
        return 130


def _install(catalogue: peers.Catalogue, names: list[str], root: Path) -> int:
    from conformance.matrix.build import install

    try:
        install(catalogue, names, root)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except environments.InstallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_PROBLEM
    return 0


def _installed(catalogue: peers.Catalogue, peer: peers.Peer, root: Path) -> str:
    missing = [
        name
        for name in peer.environments
        if name != peers.PROJECT
        and not environments.is_installed(catalogue.environments[name], root)
    ]
    return f"to install: {', '.join(missing)}" if missing else "installed"


def _build(catalogue: peers.Catalogue, names: list[str], out: Path, root: Path) -> int:
    from conformance.matrix.build import build

    try:
        outcomes = build(catalogue, names, out, root)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted: every started peer was stopped; the published matrix is unchanged")
        return 130
    for outcome in outcomes:
        print(f"{outcome.name:<26} {outcome.state:<14} {outcome.verdict or outcome.reason}")
    print(f"published in {out}")
    return _check(out, pages=False)


def _render(out: Path) -> int:
    from conformance.matrix.publish import render

    try:
        render(out)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {out}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


def _check(out: Path, pages: bool = True) -> int:
    from conformance.matrix.verify import problems

    try:
        found = problems(out, pages=pages)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {out}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for problem in found:
        print(f"{out}: {problem}")
    return EXIT_PROBLEM if found else 0
