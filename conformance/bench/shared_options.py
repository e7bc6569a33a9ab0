"""The options ``embedding-conformance bench`` and its Locust file share, defined once: what each
request holds (inputs per request, tokens per input, encoding, model), the bearer token and
where the results go. Each runner names them its own way (the Locust file prefixes ``--ec-``:
Locust's parser holds the options of every part of a run). Imports neither Locust nor numpy."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from typing import Any

MODEL = "all-MiniLM-L6-v2"  # the bundled model: the default reference is this model, run here


def positive_numbers(kind: Callable[[str], float]) -> Callable[[str], list[Any]]:
    """A parser of comma-separated positive numbers of ``kind`` (int, float)."""

    def parse(text: str) -> list[Any]:
        try:
            values = [kind(part) for part in text.split(",") if part.strip()]
        except ValueError:
            values = []
        if not values or min(values) <= 0:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated positive numbers, got {text!r}"
            )
        return values

    return parse


def add_shared_options(
    add: Callable[..., Any], flags: Mapping[str, str], host: str, **key_extras: Any
) -> None:
    """Add the shared options with ``add`` (a parser's add_argument), under the names ``flags``
    gives (by key: batch, tokens, encoding, model, api_key, out); ``host`` names the option
    the bearer token is sent to; ``key_extras`` go with the token's option (Locust's
    is_secret)."""
    add(
        flags["batch"],
        type=positive_numbers(int),
        default="1,15,64",
        metavar="N,N,...",
        help="inputs per request, comma-separated (default 1,15,64): the bench times each "
        "size, a Locust user cycles through them",
    )
    add(
        flags["tokens"],
        type=int,
        default=80,
        help="tokens per input, [CLS] and [SEP] included (default 80)",
    )
    add(
        flags["encoding"],
        default="base64",
        choices=("base64", "float"),
        help="encoding_format asked for (default base64, as the openai client)",
    )
    add(flags["model"], default=MODEL, help=f"model name sent (default {MODEL})")
    add(
        flags["api_key"],
        default=os.environ.get("EMBEDDINGS_API_KEY"),
        help=f"bearer token for {host} (default: EMBEDDINGS_API_KEY)",
        **key_extras,
    )
    add(
        flags["out"],
        default="bench-results",
        metavar="DIR",
        help="where bench.json and the plots go (default bench-results)",
    )
