"""The request shapes are what they say: built from the corpus, deterministic, and each fixed
shape holds the company it is meant to test (no server needed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from conformance.suite.reference_corpus import large_batch_cases
from conformance.suite.shape_fixtures import most_inputs
from conformance.suite.shapes import FIXED, MOST_INPUTS, SIZES, Pool, Shape, Staircase, shapes

POOL = Pool(256, tuple(large_batch_cases(None, None)))


def test_each_kind_of_company_is_among_the_fixed_shapes() -> None:
    assert {shape.kind for shape in FIXED} == set(SIZES) - {"many-tokens"}  # a fixed request's


def test_equal_shapes_hold_distinct_texts_of_the_same_words() -> None:
    for shape in (s for s in FIXED if s.kind == "equal"):
        texts = [i.text for i in shape.inputs(POOL)]
        assert len(set(texts)) == len(texts) > 1
        assert len({tuple(sorted(t.split())) for t in texts}) == 1


def test_over_long_shapes_put_the_long_input_first_in_the_middle_and_last() -> None:
    over = {i.text for i in POOL.over}
    positions = []
    for shape in (s for s in FIXED if s.kind == "over-long"):
        texts = [i.text for i in shape.inputs(POOL)]
        assert len(texts) == shape.size
        positions.append([k for k, text in enumerate(texts) if text in over])
    assert positions == [[0], [4], [8]]


def test_duplicates_repeat_a_few_texts() -> None:
    (shape,) = (s for s in FIXED if s.kind == "duplicates")
    texts = [i.text for i in shape.inputs(POOL)]
    assert len(texts) == 24 and len(set(texts)) <= 4


def test_the_staircase_has_one_text_in_flight_at_every_position() -> None:
    requests = Staircase().inputs(POOL)
    shared = POOL.short[0]
    assert [r.index(shared) for r in requests] == list(range(8))
    assert all(r.count(shared) == 1 for r in requests)


def test_a_shape_draws_the_same_inputs_every_time() -> None:
    shape = Shape("mixed", 300, 0, 1234)
    assert shape.inputs(POOL) == shape.inputs(POOL)
    assert shape.inputs(POOL) != Shape("mixed", 300, 0, 1235).inputs(POOL)


@settings(max_examples=50, database=None)
@given(shapes())
def test_every_generated_shape_builds_within_its_kinds_sizes(shape: Shape) -> None:
    lowest, highest = SIZES[shape.kind]
    assert lowest <= len(shape.inputs(POOL)) <= highest


def test_the_request_of_2048_inputs_holds_each_word_as_often() -> None:
    inputs = most_inputs(POOL)
    assert len(inputs) == MOST_INPUTS
    counts = {inputs.count(word) for word in POOL.words}
    assert counts == {MOST_INPUTS // len(POOL.words)}


@pytest.mark.parametrize(("context", "most"), [(256, 64), (384, 42), (2048, 8), (None, 64)])
def test_passages_near_a_longer_context_come_fewer_to_a_request(
    context: int | None, most: int
) -> None:
    """A request of passages near the context costs about the same tokens whatever the model's
    context: all-MiniLM-L6-v2's 64 passages of 256 tokens, nomic-embed-text's 8 of 2,048."""
    pool = Pool(context, POOL.sentences)
    assert len(Shape("many-tokens", 64, 0, 0).inputs(pool)) == most
    assert len(Shape("many-tokens", 5, 0, 0).inputs(pool)) == min(5, most)
