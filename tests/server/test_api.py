"""Request validation of the reference server: strict by default, lax but right with lenient."""

from __future__ import annotations

import json

import pytest

from conformance.server.api import (
    ApiError,
    ModelInfo,
    check_content_type,
    parse_embeddings_request,
)

MODEL = ModelInfo("all-MiniLM-L6-v2", 384, 30522, 256)


def body(**fields: object) -> bytes:
    return json.dumps({"model": MODEL.name, **fields}).encode()


@pytest.mark.parametrize(
    ("fields", "status"),
    [
        ({"input": "hi", "dimensions": "32"}, 400),
        ({"input": "hi", "dimensions": True}, 400),
        ({"input": [101, "7592", 102]}, 400),
        ({"input": "hi", "model": "another-model"}, 404),
    ],
)
def test_strict_by_default(fields: dict[str, object], status: int) -> None:
    with pytest.raises(ApiError) as error:
        parse_embeddings_request(body(**fields), MODEL)
    assert error.value.status == status


def test_lenient_reads_what_a_lax_validator_reads() -> None:
    parsed = parse_embeddings_request(body(input="hi", dimensions="32"), MODEL, lenient=True)
    assert parsed.dimensions == 32
    assert parse_embeddings_request(body(input="hi", dimensions=True), MODEL, True).dimensions == 1
    ids = parse_embeddings_request(body(input=[101, "7592", 102]), MODEL, lenient=True)
    assert ids.inputs == [[101, 7592, 102]]
    other = parse_embeddings_request(body(input="hi", model="another"), MODEL, lenient=True)
    assert other.inputs == ["hi"]
    nameless = parse_embeddings_request(b'{"input": "hi"}', MODEL, lenient=True)
    assert nameless.inputs == ["hi"]


def test_lenient_keeps_texts_that_spell_numbers_as_texts() -> None:
    parsed = parse_embeddings_request(body(input=["1", "2"]), MODEL, lenient=True)
    assert parsed.inputs == ["1", "2"]


def test_lenient_still_rejects_what_no_validator_reads() -> None:
    unreadable = (
        {"input": "hi", "dimensions": "twelve"},
        {"input": {"content": "hi"}},
        {"input": [None, {"text": "hi"}]},
    )
    for fields in unreadable:
        with pytest.raises(ApiError):
            parse_embeddings_request(body(**fields), MODEL, lenient=True)


def test_lenient_reads_what_a_lax_single_model_server_reads() -> None:
    """A model that is not a string served as the one model; dimensions 0 as none; an object
    holding a text as that text: the answers the fixture's equivalents stand for."""
    assert parse_embeddings_request(body(input="hi", model=123), MODEL, lenient=True).inputs == [
        "hi"
    ]
    zero = parse_embeddings_request(body(input="hi", dimensions=0), MODEL, lenient=True)
    assert zero.dimensions is None
    record = parse_embeddings_request(body(input={"text": "hi"}), MODEL, lenient=True)
    assert record.inputs == ["hi"]
    with pytest.raises(ApiError):
        parse_embeddings_request(body(input={"text": "hi"}), MODEL)


def test_text_plain_only_when_lenient() -> None:
    with pytest.raises(ApiError) as error:
        check_content_type("text/plain")
    assert error.value.status == 415
    check_content_type("text/plain; charset=utf-8", lenient=True)
    with pytest.raises(ApiError):
        check_content_type("application/x-www-form-urlencoded", lenient=True)


@pytest.mark.parametrize("value", ["unknown", "", 123, ["float"]])
def test_an_unknown_encoding_format_is_refused_unless_read_otherwise(value: object) -> None:
    with pytest.raises(ApiError) as error:
        parse_embeddings_request(body(input="hi", encoding_format=value), MODEL)
    assert (error.value.status, error.value.param) == (400, "encoding_format")
    lax = parse_embeddings_request(body(input="hi", encoding_format=value), MODEL, lenient=True)
    assert lax.encoding_format == "float"  # a lax server reads it as none
    fault = parse_embeddings_request(
        body(input="hi", encoding_format=value), MODEL, False, "base64"
    )
    assert fault.encoding_format == "base64"


def test_null_and_known_encoding_formats_are_read_as_given() -> None:
    assert parse_embeddings_request(body(input="hi"), MODEL).encoding_format == "float"
    for value, read in ((None, "float"), ("float", "float"), ("base64", "base64")):
        parsed = parse_embeddings_request(body(input="hi", encoding_format=value), MODEL, True)
        assert parsed.encoding_format == read
