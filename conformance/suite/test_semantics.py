"""Meaning without a reference: different texts get different vectors, a paragraph is not its
first words, and a paraphrase is closer than an unrelated text. These run for every model and
in every profile, so a run with no reference (or a reference that is wrong) still sees vectors
that carry no meaning."""

from __future__ import annotations

import pytest

from conformance.checks import semantics
from conformance.corpus import load_triplets
from conformance.run.expect import Expect
from conformance.suite.pytest_fixtures import Answers, cut_to_fit
from conformance.suite.reference_corpus import CASES, embed_texts

# Texts whose content differs for any tokenizer: ordinary words, code and numbers. (Scripts a
# vocabulary lacks, emoji and lone characters can all become the same unknown token.)
ORDINARY = {"english", "paragraph", "code", "numbers", "retrieval-query", "retrieval-doc"}
ORDINARY |= {"lang-es", "lang-de", "lang-fr", "lang-ru", "lang-uk", "lang-el"}
WITHIN_CONTEXT = [c for c in CASES.values() if not {"over-context", "near-context"} & set(c.tags)]
DISTINCT = [c for c in WITHIN_CONTEXT if ORDINARY & set(c.tags)]
PARAGRAPHS = [c for c in CASES.values() if "paragraph" in c.tags][:6]
PREFIX_WORDS = 4
TRIPLET_CHUNK = 15  # five whole triplets per request, anchor, paraphrase and unrelated in turn


@pytest.mark.requirement("semantics.distinct-texts")
def test_different_texts_get_different_vectors(
    expect: Expect, answers: Answers, context: int | None
) -> None:
    inputs = [(c.id, cut_to_fit(c.text, context)) for c in DISTINCT]
    vectors, carriers = embed_texts(expect, answers, inputs)
    ids = [c.id for c in DISTINCT]
    result = semantics.distinct_texts(vectors, ids)
    carrier = carriers[result.index] if result.index is not None else None
    expect(result, exchange=carrier, cases=ids)


@pytest.mark.requirement("semantics.not-a-prefix")
def test_a_paragraph_is_not_its_first_words(
    expect: Expect, answers: Answers, context: int | None
) -> None:
    ids = [c.id for c in PARAGRAPHS]
    inputs = [(c.id, cut_to_fit(c.text, context)) for c in PARAGRAPHS]
    inputs += [(f"{c.id}[:{PREFIX_WORDS} words]", first_words(c.text)) for c in PARAGRAPHS]
    vectors, carriers = embed_texts(expect, answers, inputs)
    full, prefixes = vectors[: len(ids)], vectors[len(ids) :]
    result = semantics.not_a_prefix(full, prefixes, ids)
    expect(result, exchange=carriers[0], cases=ids)


@pytest.mark.requirement("semantics.paraphrase-closer")
def test_a_paraphrase_is_closer_than_an_unrelated_text(expect: Expect, answers: Answers) -> None:
    triplets = load_triplets()
    inputs = [
        (f"{t.id}/{role}", text)
        for t in triplets
        for role, text in (
            ("anchor", t.anchor),
            ("paraphrase", t.paraphrase),
            ("unrelated", t.unrelated),
        )
    ]
    vectors, carriers = embed_texts(expect, answers, inputs, TRIPLET_CHUNK)
    ids = [t.id for t in triplets]
    result = semantics.paraphrase_closer(vectors[0::3], vectors[1::3], vectors[2::3], ids)
    carrier = carriers[3 * result.index] if result.index is not None else None
    expect(result, exchange=carrier, cases=ids)
    expect.note(result.detail)


def first_words(text: str) -> str:
    return " ".join(text.split()[:PREFIX_WORDS])
