"""Hypothesis strategies for embeddings request bodies, each labelled with what it deserves.

- ``valid``: within the documented API, plain printable text: must get a valid envelope.
- ``invalid``: one field broken in a way the API forbids: must get a 4xx.
- ``arguable``: odd but not clearly forbidden (control characters, unknown fields, empty
  strings, booleans or numeric strings where token ids go): anything but a 5xx.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.checks.fuzz import spells_number

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


BAD_INPUTS = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
    st.just([]),
    st.lists(
        st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=1)),
        min_size=1,
        max_size=3,
    ),
    st.tuples(st.integers(), WORDS).map(list),  # mixed numbers and strings
    st.lists(st.integers(max_value=-1), min_size=1, max_size=3),  # negative token ids
)
BAD_FORMATS = st.one_of(
    st.text(max_size=10).filter(lambda s: s not in ("float", "base64")),
    st.integers(),
    st.lists(st.integers(), max_size=2),
)
BAD_MODELS = st.one_of(st.integers(), st.lists(st.text(max_size=3), max_size=2), st.booleans())


def invalid_bodies(model: str) -> st.SearchStrategy[Labelled]:
    base = {"model": model, "input": "hello"}
    broken = st.one_of(
        BAD_INPUTS.map(lambda value: {**base, "input": value}),
        BAD_FORMATS.map(lambda value: {**base, "encoding_format": value}),
        BAD_MODELS.map(lambda value: {**base, "model": value}),
    )
    return broken.map(lambda body: ("invalid", body))


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
    return st.one_of(valid_bodies(model), invalid_bodies(model), arguable_bodies(model))
