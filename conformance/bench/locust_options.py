"""The Locust file's own options (``--ec-*``), apart from it: Locust's ``--help`` does not list
a locustfile's options, so ``embedding-conformance bench locustfile --help`` does, without
importing Locust (which patches the process for gevent on import)."""

from __future__ import annotations

import argparse
import os
from typing import Any

USAGE = (
    'locust -f "$(embedding-conformance bench locustfile)" --host URL [Locust options] '
    "[--ec-* options]"
)


def sizes(text: str) -> list[int]:
    """``--ec-batch``: comma-separated positive numbers."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive numbers, got {text!r}")
    return values


def add_options(parser: Any, **key_extras: Any) -> None:
    """Onto Locust's parser (``key_extras``: its is_secret) or a plain argparse one."""
    add = parser.add_argument
    add(
        "--ec-batch",
        type=sizes,
        default="1,15,64",
        help="inputs per request, comma-separated; requests cycle through them (default 1,15,64)",
    )
    add(
        "--ec-tokens",
        type=int,
        default=80,
        help="tokens per input, [CLS] and [SEP] included (default 80)",
    )
    add(
        "--ec-encoding",
        default="base64",
        choices=("base64", "float"),
        help="encoding_format asked for (default base64, as the openai client)",
    )
    add("--ec-model", default="all-MiniLM-L6-v2", help="model name sent (default all-MiniLM-L6-v2)")
    add(
        "--ec-reference",
        default=None,
        help="what answers are judged against, resolved once by the master: "
        "sentence-transformers:PATH or a reference endpoint's URL (default: the bundled model)",
    )
    add(
        "--ec-api-key",
        default=os.environ.get("EMBEDDINGS_API_KEY"),
        help="bearer token for --host (default: EMBEDDINGS_API_KEY)",
        **key_extras,
    )
    add(
        "--ec-requests",
        type=int,
        default=0,
        help="stop after this many requests in all (shared out among the workers; 0: no cap, "
        "--run-time bounds the run)",
    )
    add(
        "--ec-out",
        default="bench-results",
        help="where bench.json and the plots go (default bench-results)",
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
