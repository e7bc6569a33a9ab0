"""Envelope checks on batches decoded from hand-built response documents."""

from __future__ import annotations

from typing import Any

from conformance.checks import envelope
from conformance.client.decode import decode_response

VECTOR = [0.6, 0.8]


def document(count: int = 2) -> dict[str, Any]:
    """A conforming response to ``count`` inputs."""
    return {
        "object": "list",
        "model": "tiny-model",
        "data": [{"object": "embedding", "index": i, "embedding": VECTOR} for i in range(count)],
        "usage": {"prompt_tokens": 4, "total_tokens": 4},
    }


# envelope.object-list


def test_object_list_passes_on_list() -> None:
    result = envelope.object_list(decode_response(document()))
    assert result.passed
    assert result.measured == "'list'"
    assert result.margin is None
    assert result.index is None


def test_object_list_fails_on_another_object_type() -> None:
    doc = document()
    doc["object"] = "embedding_list"
    result = envelope.object_list(decode_response(doc))
    assert not result.passed
    assert result.measured == "'embedding_list'"
    assert result.margin is None


def test_object_list_fails_when_missing() -> None:
    doc = document()
    del doc["object"]
    result = envelope.object_list(decode_response(doc))
    assert not result.passed
    assert result.measured == "None"


# envelope.one-item-per-input


def test_item_count_passes_with_one_item_per_input() -> None:
    result = envelope.one_item_per_input(decode_response(document(3)), 3)
    assert result.passed
    assert result.measured == "3"
    assert result.limit == "== 3"
    assert result.margin is None
    assert result.index is None


def test_item_count_fails_on_one_item_per_token() -> None:
    result = envelope.one_item_per_input(decode_response(document(5)), 1)
    assert not result.passed
    assert result.measured == "5"
    assert result.limit == "== 1"


def test_item_count_fails_on_a_dropped_input() -> None:
    result = envelope.one_item_per_input(decode_response(document(2)), 3)
    assert not result.passed
    assert result.measured == "2"


def test_item_count_fails_when_data_is_not_a_list() -> None:
    doc = document()
    doc["data"] = {"0": VECTOR}
    result = envelope.one_item_per_input(decode_response(doc), 1)
    assert not result.passed
    assert result.measured == "'data is not a list'"


# envelope.item-shape


def test_item_shape_passes_on_conforming_items() -> None:
    result = envelope.item_shape(decode_response(document(3)))
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_item_shape_fails_on_a_string_index() -> None:
    doc = document(3)
    doc["data"][1]["index"] = "1"
    result = envelope.item_shape(decode_response(doc))
    assert not result.passed
    assert result.measured == 1
    assert result.margin == -1.0
    assert result.index == 1
    assert "index='1'" in result.detail


def test_item_shape_fails_on_a_boolean_index() -> None:
    doc = document(2)
    doc["data"][1]["index"] = True
    result = envelope.item_shape(decode_response(doc))
    assert not result.passed
    assert result.index == 1


def test_item_shape_fails_on_a_missing_object_field() -> None:
    doc = document(3)
    del doc["data"][2]["object"]
    doc["data"][0]["object"] = "vector"
    result = envelope.item_shape(decode_response(doc))
    assert not result.passed
    assert result.measured == 2
    assert result.margin == -2.0
    assert result.index == 0


# envelope.index-order


def test_index_order_passes_when_index_equals_position() -> None:
    result = envelope.index_order(decode_response(document(4)))
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_index_order_fails_on_indices_starting_at_one() -> None:
    doc = document(3)
    for position, item in enumerate(doc["data"]):
        item["index"] = position + 1
    result = envelope.index_order(decode_response(doc))
    assert not result.passed
    assert result.measured == 3
    assert result.margin == -3.0
    assert result.index == 0
    assert "indices [1, 2, 3]" in result.detail


def test_index_order_fails_on_two_swapped_items() -> None:
    doc = document(3)
    doc["data"][1]["index"], doc["data"][2]["index"] = 2, 1
    result = envelope.index_order(decode_response(doc))
    assert not result.passed
    assert result.measured == 2
    assert result.index == 1


# envelope.model-string


def test_model_string_passes_on_a_name() -> None:
    result = envelope.model_string(decode_response(document()))
    assert result.passed
    assert result.measured == "'tiny-model'"
    assert result.margin is None
    assert result.index is None


def test_model_string_fails_on_null() -> None:
    doc = document()
    doc["model"] = None
    result = envelope.model_string(decode_response(doc))
    assert not result.passed
    assert result.measured == "None"


def test_model_string_fails_on_empty_string() -> None:
    doc = document()
    doc["model"] = ""
    assert not envelope.model_string(decode_response(doc)).passed


# envelope.embedding-number-array


def test_number_arrays_passes_on_flat_float_lists() -> None:
    result = envelope.embedding_number_array(decode_response(document(3)))
    assert result.passed
    assert result.measured == 0
    assert result.margin == 0.0
    assert result.index is None


def test_number_arrays_fails_on_a_per_token_nested_embedding() -> None:
    doc = document(3)
    doc["data"][1]["embedding"] = [VECTOR, VECTOR, VECTOR]  # one row per token
    result = envelope.embedding_number_array(decode_response(doc))
    assert not result.passed
    assert result.measured == 1
    assert result.margin == -1.0
    assert result.index == 1
    assert "nested" in result.detail


def test_number_arrays_fails_on_numbers_sent_as_strings() -> None:
    doc = document(2)
    doc["data"][0]["embedding"] = ["0.6", "0.8"]
    result = envelope.embedding_number_array(decode_response(doc))
    assert not result.passed
    assert result.index == 0
    assert "non-numeric" in result.detail


def test_number_arrays_fails_on_a_base64_string_in_float_mode() -> None:
    doc = document(2)
    doc["data"][1]["embedding"] = "AAAAAA=="
    result = envelope.embedding_number_array(decode_response(doc))
    assert not result.passed
    assert result.index == 1


# envelope.usage


def test_usage_passes_on_positive_integers() -> None:
    result = envelope.usage(decode_response(document()))
    assert result.passed
    assert result.measured == "prompt_tokens=4, total_tokens=4"
    assert result.margin is None
    assert result.index is None


def test_usage_fails_on_float_counts() -> None:
    doc = document()
    doc["usage"] = {"prompt_tokens": 4.0, "total_tokens": 4.0}
    result = envelope.usage(decode_response(doc))
    assert not result.passed
    assert result.measured == "prompt_tokens=4.0, total_tokens=4.0"


def test_usage_fails_when_missing() -> None:
    doc = document()
    del doc["usage"]
    result = envelope.usage(decode_response(doc))
    assert not result.passed
    assert result.measured == "missing"
    assert result.margin is None


def test_usage_fails_when_null() -> None:
    doc = document()
    doc["usage"] = None
    assert not envelope.usage(decode_response(doc)).passed


def test_usage_fails_when_a_count_is_missing() -> None:
    doc = document()
    doc["usage"] = {"prompt_tokens": 4}
    result = envelope.usage(decode_response(doc))
    assert not result.passed
    assert result.measured == "prompt_tokens=4, total_tokens=None"


def test_usage_fails_on_zero_prompt_tokens() -> None:
    doc = document()
    doc["usage"] = {"prompt_tokens": 0, "total_tokens": 0}
    assert not envelope.usage(decode_response(doc)).passed


def test_usage_fails_when_total_is_below_prompt() -> None:
    doc = document()
    doc["usage"] = {"prompt_tokens": 5, "total_tokens": 4}
    assert not envelope.usage(decode_response(doc)).passed


def test_usage_fails_on_boolean_counts() -> None:
    doc = document()
    doc["usage"] = {"prompt_tokens": True, "total_tokens": True}
    assert not envelope.usage(decode_response(doc)).passed
