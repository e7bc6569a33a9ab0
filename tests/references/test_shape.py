"""response_shape: the key paths and JSON types of an answer, kept in a baseline."""

from __future__ import annotations

from typing import Any

from conformance.references.shape import response_shape

ENVELOPE = [
    "$:object",
    "data:array",
    "data[]:object",
    "data[].index:number",
    "data[].object:string",
    "model:string",
    "object:string",
    "usage:object",
    "usage.prompt_tokens:number",
    "usage.total_tokens:number",
]


def answer(*embeddings: Any) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(embeddings)
        ],
        "model": "m",
        "usage": {"prompt_tokens": 2, "total_tokens": 2},
    }


def test_float_answer_has_an_array_embedding_and_a_sorted_shape() -> None:
    shape = response_shape(answer([0.1, 0.2], [0.3, 0.4]))
    assert shape == sorted([*ENVELOPE, "data[].embedding:array"])


def test_base64_answer_has_a_string_embedding() -> None:
    shape = response_shape(answer("AAAAAA==", "AAAAAA=="))
    assert shape == sorted([*ENVELOPE, "data[].embedding:string"])


def test_array_elements_are_merged_so_the_shape_does_not_grow_with_the_batch() -> None:
    assert response_shape(answer([0.1])) == response_shape(answer(*[[0.1]] * 5))


def test_merged_elements_keep_a_field_only_some_of_them_have() -> None:
    document = answer([0.1], [0.2])
    document["data"][1]["extra"] = None
    assert "data[].extra:null" in response_shape(document)


def test_number_arrays_are_not_entered() -> None:
    assert not [p for p in response_shape(answer([1, 2.5])) if "embedding[]" in p]


def test_the_root_is_named_dollar() -> None:
    assert response_shape({})[0] == "$:object"
    assert response_shape([]) == ["$:array"]
