"""Hypothesis strategies for embeddings request bodies, each labelled with what it deserves.

- ``valid``: within the documented API, plain printable text: must get a valid envelope.
- ``invalid``: one field broken in a way the API forbids and the error cases demand a 4xx for
  at MUST: must get a 4xx.
- ``arguable``: odd but not clearly forbidden (control characters, unknown fields, empty
  strings, booleans or numeric strings where token ids go), or broken in a way the error cases
  call hygiene (a SHOULD: ``input: []``, an unknown ``encoding_format``): anything but a 5xx.

Each kind of broken body is an instance of one bad request of fixtures/bad_requests.json and
takes its label from that case's level, so the fuzzer demands a 4xx exactly where the fixtures
do (tests/suite/test_strategies.py holds the two together).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.internal import constants_ast
from hypothesis.internal.conjecture import providers

from conformance.checks.fuzz import spells_number
from conformance.corpus import load_bad_requests

Labelled = tuple[str, dict[str, Any]]

# Letters, marks, numbers, punctuation, symbols and spaces of every script; no control or
# surrogate characters, which servers may legitimately refuse.
PRINTABLE = st.characters(categories=("L", "M", "N", "P", "S", "Zs"))
TEXT = st.text(PRINTABLE, min_size=1, max_size=80).filter(lambda s: any(c.isalnum() for c in s))
# Text no lax validator reads as a number ("12" becomes 12 for pydantic, which is arguable).
WORDS = TEXT.filter(lambda s: not spells_number(s))
ODD_TEXT = st.text(st.characters(categories=("Cc", "Cf", "Zs", "Zl", "Zp")), max_size=20)
FORMATS = st.sampled_from([None, "float", "base64"])


def _with_format(body: dict[str, Any], encoding_format: str | None) -> dict[str, Any]:
    return body if encoding_format is None else {**body, "encoding_format": encoding_format}


def valid_bodies(model: str) -> st.SearchStrategy[Labelled]:
    inputs = st.one_of(TEXT, st.lists(TEXT, min_size=1, max_size=8))
    bodies = st.builds(lambda i, f: _with_format({"model": model, "input": i}, f), inputs, FORMATS)
    return bodies.map(lambda body: ("valid", body))


@dataclass(frozen=True)
class BrokenKind:
    """One way to break one field of a valid body, an instance of the fixture bad request
    ``case``: its label is that case's level, never the fuzzer's own idea of invalid."""

    case: str  # an id of fixtures/bad_requests.json
    field: str  # the field of {"model": ..., "input": "hello"} it breaks
    values: st.SearchStrategy[Any]

    @property
    def label(self) -> str:
        return "invalid" if BAD_REQUESTS[self.case].expect == "reject" else "arguable"


BAD_REQUESTS = {bad.id: bad for bad in load_bad_requests()}
BROKEN_KINDS = (
    BrokenKind("null-input", "input", st.none()),
    BrokenKind("boolean-input", "input", st.booleans()),
    BrokenKind("number-input", "input", st.floats(allow_nan=False, allow_infinity=False)),
    BrokenKind(
        "object-input",
        "input",
        st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
    ),
    BrokenKind("empty-array", "input", st.just([])),
    BrokenKind(
        "non-text-items",
        "input",
        st.lists(
            st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=1)),
            min_size=1,
            max_size=3,
        ),
    ),
    BrokenKind("mixed-array", "input", st.tuples(st.integers(), WORDS).map(list)),
    BrokenKind(
        "negative-token-id", "input", st.lists(st.integers(max_value=-1), min_size=1, max_size=3)
    ),
    BrokenKind(
        "encoding-format-unknown",
        "encoding_format",
        st.text(min_size=1, max_size=10).filter(lambda s: s not in ("float", "base64")),
    ),
    BrokenKind("encoding-format-empty", "encoding_format", st.just("")),
    # not a string at all: 123 or [1, 2], the same level as the fixture's 123
    BrokenKind(
        "encoding-format-number",
        "encoding_format",
        st.one_of(st.integers(), st.lists(st.integers(), max_size=2)),
    ),
    BrokenKind(
        "model-not-string",
        "model",
        st.one_of(st.integers(), st.lists(st.text(max_size=3), max_size=2), st.booleans()),
    ),
)


def broken_bodies(model: str) -> st.SearchStrategy[Labelled]:
    """{"model": model, "input": "hello"} with one field broken, labelled by its fixture case."""
    base = {"model": model, "input": "hello"}
    return st.one_of([_broken(kind, base) for kind in BROKEN_KINDS])


def _broken(kind: BrokenKind, base: dict[str, Any]) -> st.SearchStrategy[Labelled]:
    return kind.values.map(lambda value: (kind.label, {**base, kind.field: value}))


def arguable_bodies(model: str) -> st.SearchStrategy[Labelled]:
    odd = st.one_of(
        ODD_TEXT.map(lambda text: {"model": model, "input": text or ""}),
        st.lists(ODD_TEXT, min_size=1, max_size=4).map(lambda t: {"model": model, "input": t}),
        st.dictionaries(
            st.text(min_size=1, max_size=8).filter(
                lambda k: k not in ("model", "input", "encoding_format", "dimensions", "user")
            ),
            st.integers(),
            min_size=1,
            max_size=2,
        ).map(lambda extra: {"model": model, "input": "hello", **extra}),
        # Lax validators (pydantic's default) read booleans as the token ids 0 and 1: hygiene,
        # not a wrong answer; accepted, it must still be a valid envelope.
        st.lists(st.booleans(), min_size=1, max_size=3).map(
            lambda flags: {"model": model, "input": flags}
        ),
        # ... and numeric strings among token ids as the numbers they spell.
        st.tuples(st.integers(0, 1000), st.integers(0, 1000).map(str)).map(
            lambda ids: {"model": model, "input": list(ids)}
        ),
    )
    return odd.map(lambda body: ("arguable", body))


def request_bodies(model: str) -> st.SearchStrategy[Labelled]:
    return st.one_of(valid_bodies(model), broken_bodies(model), arguable_bodies(model))


@contextmanager
def seeded_only() -> Iterator[None]:
    """Draw from the seed and the strategies alone. Hypothesis also draws about one value in
    twenty from the constants written in the process's own (not installed) modules: under an
    editable install or a user's conftest, what the fuzzer sends would change with any edit of
    any such module, and a baseline would compare different bodies across versions. Its hook is
    private; tests/suite/test_strategies.py fails when it moves."""
    own = providers._get_local_constants
    providers._get_local_constants = constants_ast.Constants  # no constants at all
    providers.CONSTANTS_CACHE.cache.clear()  # it keeps what was drawn with the others
    try:
        yield
    finally:
        providers._get_local_constants = own
        providers.CONSTANTS_CACHE.cache.clear()
