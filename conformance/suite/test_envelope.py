"""The response envelope, for a single string input and for a batch of 32 strings."""

from __future__ import annotations

import pytest

from conformance.checks import envelope
from conformance.client import Exchange
from conformance.expect import Expect

SAMPLES = ("string", "batch")


@pytest.fixture(params=SAMPLES)
def sample(request: pytest.FixtureRequest) -> tuple[Exchange, list[str]]:
    """(answer, case ids of its inputs) for a string input and for a 32-string batch."""
    if request.param == "string":
        return request.getfixturevalue("single")("one-token"), ["one-token"]
    return request.getfixturevalue("batch_float"), request.getfixturevalue("batch_ids")


@pytest.mark.requirement("envelope.object-list")
def test_object_is_list(expect: Expect, sample: tuple[Exchange, list[str]]) -> None:
    exchange, ids = sample
    batch = expect.ok("envelope.object-list", exchange, ids)
    expect("envelope.object-list", envelope.check_object_list(batch), exchange=exchange)


@pytest.mark.requirement("envelope.one-item-per-input")
def test_one_item_per_input(expect: Expect, sample: tuple[Exchange, list[str]]) -> None:
    exchange, ids = sample
    batch = expect.ok("envelope.one-item-per-input", exchange, ids)
    expect(
        "envelope.one-item-per-input", envelope.check_item_count(batch, len(ids)), exchange=exchange
    )


@pytest.mark.requirement("envelope.item-shape")
def test_item_shape(expect: Expect, sample: tuple[Exchange, list[str]]) -> None:
    exchange, ids = sample
    batch = expect.ok("envelope.item-shape", exchange, ids)
    expect("envelope.item-shape", envelope.check_item_shape(batch), exchange=exchange, cases=ids)


@pytest.mark.requirement("envelope.index-order")
def test_index_order(expect: Expect, sample: tuple[Exchange, list[str]]) -> None:
    exchange, ids = sample
    batch = expect.ok("envelope.index-order", exchange, ids)
    expect("envelope.index-order", envelope.check_index_order(batch), exchange=exchange, cases=ids)


@pytest.mark.requirement("envelope.model-string")
def test_model_is_string(expect: Expect, sample: tuple[Exchange, list[str]]) -> None:
    exchange, ids = sample
    batch = expect.ok("envelope.model-string", exchange, ids)
    expect("envelope.model-string", envelope.check_model_string(batch), exchange=exchange)


@pytest.mark.requirement("envelope.embedding-number-array")
def test_embedding_is_number_array(expect: Expect, sample: tuple[Exchange, list[str]]) -> None:
    exchange, ids = sample
    batch = expect.ok("envelope.embedding-number-array", exchange, ids)
    expect(
        "envelope.embedding-number-array",
        envelope.check_number_arrays(batch),
        exchange=exchange,
        cases=ids,
    )


@pytest.mark.requirement("envelope.usage")
def test_usage(expect: Expect, sample: tuple[Exchange, list[str]]) -> None:
    exchange, ids = sample
    batch = expect.ok("envelope.usage", exchange, ids)
    expect("envelope.usage", envelope.check_usage(batch), exchange=exchange)
