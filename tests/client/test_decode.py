"""Decoding response documents: every malformed shape is recorded, never raised (but a
non-object document is)."""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np
import pytest

from conformance.client.decode import decode_base64_vector, decode_response, json_type
from conformance.wire import Item

ROW = [0.25, -0.5, 1.0]


def b64(values: list[float], dtype: str = "<f4") -> str:
    return base64.b64encode(np.asarray(values, dtype).tobytes()).decode("ascii")


def item_of(embedding: Any) -> Item:
    """The decoded item of a one-item response whose embedding is ``embedding``."""
    doc = {
        "object": "list",
        "model": "m",
        "data": [{"object": "embedding", "index": 0, "embedding": embedding}],
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }
    (item,) = decode_response(doc).items
    return item


# the envelope


def test_envelope_fields_are_kept_as_sent() -> None:
    batch = decode_response(
        {
            "object": "list",
            "model": "tiny",
            "data": [
                {"object": "embedding", "index": 0, "embedding": ROW},
                {"object": "embedding", "index": 1, "embedding": ROW},
            ],
            "usage": {"prompt_tokens": 3, "total_tokens": 5},
        }
    )
    assert batch.object == "list"
    assert batch.model == "tiny"
    assert batch.data_is_list
    assert batch.usage is not None
    assert (batch.usage.prompt_tokens, batch.usage.total_tokens) == (3, 5)
    assert [item.index for item in batch.items] == [0, 1]
    assert [item.object for item in batch.items] == ["embedding", "embedding"]
    assert batch.matrix().shape == (2, 3)


def test_usage_is_none_when_not_an_object() -> None:
    assert decode_response({"data": [], "usage": [3, 3]}).usage is None
    assert decode_response({"data": []}).usage is None


def test_usage_keeps_float_counts_for_the_checks_to_judge() -> None:
    batch = decode_response({"data": [], "usage": {"prompt_tokens": 3.0}})
    assert batch.usage is not None
    assert batch.usage.prompt_tokens == 3.0
    assert batch.usage.total_tokens is None


@pytest.mark.parametrize("document", [[{"embedding": ROW}], "list", None, 3])
def test_top_level_not_an_object_raises_value_error(document: Any) -> None:
    with pytest.raises(ValueError, match="not an object"):
        decode_response(document)


@pytest.mark.parametrize("data", [{"0": ROW}, "oops", None])
def test_data_not_a_list_gives_no_items(data: Any) -> None:
    batch = decode_response({"object": "list", "data": data})
    assert not batch.data_is_list
    assert batch.items == ()


def test_missing_data_gives_no_items() -> None:
    batch = decode_response({"object": "list"})
    assert not batch.data_is_list
    assert batch.items == ()


# float lists


def test_float_list_decodes_to_a_float64_vector() -> None:
    item = item_of(ROW)
    assert item.encoding == "float"
    assert item.wire_type == "array"
    assert item.problem is None
    assert item.base64_bytes is None
    assert item.vector is not None
    assert item.vector.dtype == np.float64
    assert item.vector.tolist() == ROW


def test_integers_are_numbers() -> None:
    item = item_of([0, 1, -2])
    assert item.encoding == "float"
    assert item.vector is not None
    assert item.vector.tolist() == [0.0, 1.0, -2.0]


def test_empty_list_is_an_empty_float_vector() -> None:
    item = item_of([])
    assert item.encoding == "float"
    assert item.vector is not None
    assert len(item.vector) == 0


# base64


def test_base64_decodes_little_endian_float32() -> None:
    item = item_of(b64(ROW))
    assert item.encoding == "base64"
    assert item.wire_type == "string"
    assert item.problem is None
    assert item.base64_bytes == 4 * len(ROW)
    assert item.vector is not None
    assert item.vector.dtype == np.float64
    assert item.vector.tolist() == ROW


def test_big_endian_base64_decodes_to_other_values() -> None:
    item = item_of(b64(ROW, ">f4"))
    assert item.encoding == "base64"
    assert item.vector is not None
    assert item.vector.tolist() != ROW


def test_float64_base64_decodes_to_twice_the_length() -> None:
    item = item_of(b64(ROW, "<f8"))
    assert item.encoding == "base64"
    assert item.base64_bytes == 8 * len(ROW)
    assert item.vector is not None
    assert len(item.vector) == 2 * len(ROW)


def test_base64_with_invalid_characters_is_undecodable() -> None:
    item = item_of("AAAA!AAA")
    assert item.encoding == "undecodable"
    assert item.vector is None
    assert item.wire_type == "string"
    assert item.base64_bytes is None
    assert item.problem is not None and "not valid base64" in item.problem


@pytest.mark.parametrize("text", ["AAAAA", "AAAAAA"])
def test_base64_of_a_length_not_a_multiple_of_four_is_undecodable(text: str) -> None:
    item = item_of(text)
    assert item.encoding == "undecodable"
    assert item.vector is None
    assert item.problem is not None and "not valid base64" in item.problem


def test_base64_of_a_byte_count_not_a_multiple_of_four_is_undecodable() -> None:
    text = base64.b64encode(b"\x00" * 6).decode("ascii")
    item = item_of(text)
    assert item.encoding == "undecodable"
    assert item.vector is None
    assert item.base64_bytes == 6
    assert item.problem is not None and "not a multiple of 4" in item.problem


def test_decode_base64_vector_returns_vector_size_and_no_problem() -> None:
    vector, size, problem = decode_base64_vector(b64(ROW))
    assert vector is not None and vector.tolist() == ROW
    assert size == 12
    assert problem is None


def test_empty_base64_string_is_an_empty_vector() -> None:
    item = item_of("")
    assert item.encoding == "base64"
    assert item.base64_bytes == 0
    assert item.vector is not None and len(item.vector) == 0


# nested lists


def test_nested_list_is_flattened_and_flagged() -> None:
    item = item_of([ROW, ROW])
    assert item.encoding == "nested"
    assert item.wire_type == "array"
    assert item.vector is not None
    assert item.vector.tolist() == ROW + ROW
    assert item.problem is not None and "nested array of 2 rows" in item.problem


def test_nested_list_with_a_non_number_is_non_numeric() -> None:
    item = item_of([[0.1, None], [0.2, 0.3]])
    assert item.encoding == "non-numeric"
    assert item.vector is not None
    assert all(math.isnan(x) for x in item.vector)


# non-numbers: strings, booleans, null


def test_strings_as_numbers_are_converted_but_flagged() -> None:
    item = item_of(["0.1", "0.2", 0.3])
    assert item.encoding == "non-numeric"
    assert item.vector is not None
    assert item.vector.tolist() == [0.1, 0.2, 0.3]
    assert item.problem is not None and "'0.1'" in item.problem


def test_non_numeric_strings_become_nan() -> None:
    item = item_of(["abc", 0.5])
    assert item.encoding == "non-numeric"
    assert item.vector is not None
    assert math.isnan(item.vector[0])
    assert item.vector[1] == 0.5


def test_booleans_are_not_numbers() -> None:
    item = item_of([True, 0.5, False])
    assert item.encoding == "non-numeric"
    assert item.vector is not None
    assert math.isnan(item.vector[0]) and math.isnan(item.vector[2])
    assert item.vector[1] == 0.5
    assert item.problem is not None and "True" in item.problem


def test_null_elements_become_nan() -> None:
    item = item_of([0.1, None, 0.3])
    assert item.encoding == "non-numeric"
    assert item.vector is not None
    assert math.isnan(item.vector[1])
    assert item.vector[0] == 0.1
    assert item.problem is not None and "None" in item.problem


# missing or wrong-typed embeddings, non-dict items


def test_null_embedding_is_undecodable() -> None:
    item = item_of(None)
    assert item.encoding == "undecodable"
    assert item.vector is None
    assert item.wire_type == "null"
    assert item.problem is not None and "not a list" in item.problem


def test_missing_embedding_is_undecodable() -> None:
    (item,) = decode_response({"data": [{"object": "embedding", "index": 0}]}).items
    assert item.encoding == "undecodable"
    assert item.vector is None
    assert item.wire_type == "null"
    assert item.object == "embedding"
    assert item.index == 0


@pytest.mark.parametrize(
    ("embedding", "wire_type"), [({"values": ROW}, "object"), (0.5, "number"), (True, "boolean")]
)
def test_embedding_of_another_type_is_undecodable(embedding: Any, wire_type: str) -> None:
    item = item_of(embedding)
    assert item.encoding == "undecodable"
    assert item.vector is None
    assert item.wire_type == wire_type


@pytest.mark.parametrize("value", [5, ROW, "x", None])
def test_non_dict_item_is_undecodable(value: Any) -> None:
    batch = decode_response({"object": "list", "data": [value]})
    (item,) = batch.items
    assert item.encoding == "undecodable"
    assert item.vector is None
    assert item.object is None
    assert item.index is None


def test_non_dict_item_records_its_problem() -> None:
    (item,) = decode_response({"object": "list", "data": [5]}).items
    assert item.problem == "data item is number"
    assert not item.wire_type.startswith("data item")


def test_json_type_names_json_types() -> None:
    assert json_type("s") == "string"
    assert json_type([1]) == "array"
    assert json_type({}) == "object"
    assert json_type(True) == "boolean"
    assert json_type(None) == "null"
    assert json_type(1) == "number"
    assert json_type(1.5) == "number"
