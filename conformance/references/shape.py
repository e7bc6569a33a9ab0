"""What an endpoint visibly does besides its vectors, kept in a baseline: the shape of its
answers and how it answers each packaged bad request."""

from __future__ import annotations

from typing import Any

from conformance.checks.errors import envelope_deviations
from conformance.client import EmbeddingsClient, EndpointError, Exchange
from conformance.client.decode import json_type
from conformance.client.http import parse_json
from conformance.corpus import load_bad_requests

PROBE = ["hello", "world"]


def response_shape(document: Any, path: str = "") -> list[str]:
    """Every key path of a JSON document with its type, e.g. ``data[].index:number``; the
    elements of an array are merged, so the shape does not grow with the batch."""
    here = [f"{path or '$'}:{json_type(document)}"]
    if isinstance(document, dict):
        for key, value in document.items():
            here += response_shape(value, f"{path}.{key}" if path else key)
    elif isinstance(document, list) and document and not isinstance(document[0], (int, float)):
        for element in document:
            here += response_shape(element, f"{path}[]")
    return sorted(set(here))


def shape_of(exchange: Exchange) -> list[str]:
    if exchange.status != 200:
        return [f"HTTP {exchange.status}"]
    try:
        return response_shape(parse_json(exchange.raw))
    except ValueError:
        return ["not JSON"]


def error_answer(exchange: Exchange) -> dict[str, Any]:
    answer: dict[str, Any] = {"status": exchange.status}
    if exchange.status >= 400:
        answer["envelope"] = not envelope_deviations(exchange.error_body)
    return answer


def observed_behaviour(client: EmbeddingsClient) -> dict[str, Any]:
    """The answers' shape for float and base64 output, and the status (and whether the error
    envelope conforms) of every packaged bad request."""
    try:
        shape = {
            encoding: shape_of(client.embed(PROBE, encoding_format=encoding))
            for encoding in ("float", "base64")
        }
        errors = {bad.id: error_answer(client.send_bad(bad)) for bad in load_bad_requests()}
    except EndpointError as exc:
        raise EndpointError(f"while observing the endpoint's behaviour: {exc}") from None
    return {"shape": shape, "errors": errors}
