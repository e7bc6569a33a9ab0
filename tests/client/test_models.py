"""Decoding GET /v1/models: the well-formed entries are kept, anything else is named, nothing
raises; and the callers (preflight, fingerprint, the listed context) read it the same way."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.client import Endpoint
from conformance.client.http import HttpReply
from conformance.client.models import ListedModel, ModelList, decode_models
from conformance.client.preflight import PreflightError, discover_model
from conformance.run.fingerprint import server_fingerprint


def listing(*entries: Any) -> bytes:
    return json.dumps({"object": "list", "data": list(entries)}).encode()


def test_a_well_formed_list_has_its_ids_in_order_and_no_problem() -> None:
    raw = listing({"id": "b", "max_model_len": 512}, {"id": "a", "object": "model"})
    models = decode_models(200, raw)
    assert models == ModelList((ListedModel("b", 512), ListedModel("a")), None)
    assert models.ids == ("b", "a")
    assert models.context_of("b") == 512 and models.context_of("a") is None
    assert models.context_of("other") is None


@pytest.mark.parametrize(
    ("status", "raw", "problem"),
    [
        (404, b"not found", "HTTP 404"),
        (200, b"<html>", "not JSON"),
        (200, b"[1, 2]", "a JSON array, not an object"),
        (200, b"{}", "no 'data', not an array of models"),
        (200, b'{"data": {"id": "m"}}', "'data' is a JSON object, not an array"),
        (200, listing(), "'data' lists no model"),
    ],
)
def test_an_answer_without_a_list_has_no_ids_and_says_why(
    status: int, raw: bytes, problem: str
) -> None:
    models = decode_models(status, raw)
    assert models.ids == () and models.problem is not None and problem in models.problem


def test_malformed_entries_are_left_out_and_named() -> None:
    models = decode_models(200, listing("m", {"id": 7}, {"id": "kept"}))
    assert models.ids == ("kept",)
    assert models.problem is not None
    assert "2 of 3 entries are not an object with a string 'id'" in models.problem
    assert 'index 0: "m"' in models.problem


@pytest.mark.parametrize("length", [0, -1, 1.5, "512", True, None])
def test_a_context_that_is_not_a_positive_integer_is_not_stated(length: Any) -> None:
    assert decode_models(200, listing({"id": "m", "max_model_len": length})).context_of("m") is None


class Replying:
    """A client stand-in whose models route gives one fixed answer."""

    endpoint = Endpoint(embeddings_url="http://h/v1/embeddings", models_url="http://h/v1/models")

    def __init__(self, raw: bytes, status: int = 200) -> None:
        self.reply = HttpReply(status, {"server": "stub"}, raw, 0.0)

    def get_models(self) -> HttpReply:
        return self.reply

    def send(self, method: str, url: str) -> HttpReply:  # GET /version: none here
        return HttpReply(404, {}, b"", 0.0)


def test_the_preflight_takes_the_first_id_of_a_well_formed_list_only() -> None:
    assert discover_model(Replying(listing({"id": "first"}, {"id": "second"}))) == "first"
    with pytest.raises(PreflightError, match=r"index 0.*--model NAME"):
        discover_model(Replying(listing({"name": "first"}, {"id": "second"})))


def test_the_fingerprint_keeps_what_it_can_read() -> None:
    client = Replying(listing({"name": "first"}, {"id": "second"}))
    assert server_fingerprint(client)["models"] == ["second"]
