"""The Locust file's own options (``--ec-*``), apart from it: Locust's ``--help`` does not list
a locustfile's options, so ``embedding-conformance bench locustfile --help`` does, without
importing Locust (which patches the process for gevent on import)."""

from __future__ import annotations

import argparse
from typing import Any

from conformance.bench.shared_options import add_shared_options

USAGE = (
    'locust -f "$(embedding-conformance bench locustfile)" --host URL [Locust options] '
    "[--ec-* options]"
)


FLAGS = {
    "batch": "--ec-batch",
    "tokens": "--ec-tokens",
    "encoding": "--ec-encoding",
    "model": "--ec-model",
    "api_key": "--ec-api-key",
    "out": "--ec-out",
}


def add_options(parser: Any, **key_extras: Any) -> None:
    """Onto Locust's parser (``key_extras``: its is_secret) or a plain argparse one."""
    add_shared_options(parser.add_argument, FLAGS, "--host", **key_extras)
    parser.add_argument(
        "--ec-reference",
        default=None,
        help="what answers are judged against, resolved once by the master: "
        "sentence-transformers:PATH or a reference endpoint's URL (default: the bundled model)",
    )
    parser.add_argument(
        "--ec-requests",
        type=int,
        default=0,
        help="stop after this many requests in all (shared out among the workers; 0: no cap, "
        "--run-time bounds the run)",
    )


def print_help(argv: list[str]) -> None:
    """``embedding-conformance bench locustfile --help``: the options above, in argparse's form."""
    parser = argparse.ArgumentParser(
        prog="embedding-conformance bench locustfile",
        usage=USAGE,
        description="Prints the path of the Locust file that sends the bench's requests and "
        "judges every answer. Its own options, given to locust next to Locust's:",
    )
    add_options(parser)
    parser.parse_args(argv)
