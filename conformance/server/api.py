"""Request parsing and validation for the frontend (pure: no model, no HTTP).

Every client mistake becomes an :class:`ApiError`, rendered as OpenAI's error envelope.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

MAX_INPUTS = 2048  # OpenAI's limit: one request must not be able to exhaust the server

# Either texts or token-id sequences; never a mix (the OpenAI schema has no mixed form).
Inputs: TypeAlias = "list[str] | list[list[int]]"


class ApiError(Exception):
    """A client-visible failure, rendered as the OpenAI error envelope."""

    def __init__(
        self, status: int, message: str, param: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code


@dataclass(frozen=True)
class ModelInfo:
    """What validation needs to know about the served model (reported by the workers)."""

    name: str
    dimension: int
    vocab_size: int
    max_tokens: int


@dataclass(frozen=True)
class EmbeddingsRequest:
    inputs: Inputs
    encoding_format: str
    dimensions: int | None  # None: the native size


def check_content_type(header: str | None, lenient: bool = False) -> None:
    """Accept JSON (or a +json type); a missing header is taken to mean JSON, as curl -d sends.
    Lenient: text/plain too, as many FastAPI servers do (the body is still parsed as JSON)."""
    if not header:
        return
    media = header.split(";", 1)[0].strip().lower()
    if lenient and media == "text/plain":
        return
    if media != "application/json" and not media.endswith("+json"):
        raise ApiError(415, f"Unsupported Content-Type {header!r}: send application/json")


def parse_embeddings_request(
    body: bytes, model: ModelInfo, lenient: bool = False, unknown_format: str | None = None
) -> EmbeddingsRequest:
    """Validate an embeddings body against the served model. Lenient, like a lax (pydantic
    style) validator on a single-model server: any model (a name, none, or not a string) is
    served, numeric strings (and booleans, for 'dimensions') are read as the integers they
    spell, 'dimensions' 0 as none, an input {"text": ...} as its text, and an unknown
    encoding_format as none (floats). ``unknown_format``: what an encoding_format other than
    'float' and 'base64' is read as, instead of a 400 (a fault's, or a lax server's, reading)."""
    request = _load_object(body, model.name, lenient)
    if lenient:
        request = {**request, **_coerced(request)}
    if lenient and unknown_format is None:
        unknown_format = "float"
    fmt = _parse_format(request.get("encoding_format"), unknown_format)
    inputs = _parse_input(request.get("input"), model.vocab_size)
    dimensions = _parse_dimensions(request.get("dimensions"), model.dimension)
    return EmbeddingsRequest(inputs, fmt, dimensions)


def _parse_format(value: object, unknown_format: str | None) -> str:
    if value is None:  # null, as absent (LiteLLM sends its unset fields so)
        return "float"
    if value in ("float", "base64"):
        return value
    if unknown_format is not None:
        return unknown_format
    message = f"Invalid encoding_format {value!r}: expected 'float' or 'base64'"
    raise ApiError(400, message, "encoding_format")


def parse_tokenize_request(body: bytes, model: ModelInfo) -> tuple[str, bool]:
    """Validate a vLLM-style /tokenize body; return (prompt, add_special_tokens)."""
    request = _load_object(body, model.name)
    prompt = request.get("prompt")
    if not isinstance(prompt, str):
        raise ApiError(400, "'prompt' must be a string", "prompt")
    _check_encodable(prompt, "prompt")
    special = request.get("add_special_tokens")
    special = True if special is None else special
    if not isinstance(special, bool):
        raise ApiError(400, "'add_special_tokens' must be a boolean", "add_special_tokens")
    return prompt, special


def _coerced(request: dict[str, Any]) -> dict[str, Any]:
    """What a lax validator makes of 'dimensions' and of the input: '32' -> 32, true -> 1,
    0 -> none; [101, "7592", 102] -> [101, 7592, 102], {"text": "hello"} -> "hello"."""
    changed: dict[str, Any] = {}
    dimensions = request.get("dimensions")
    if isinstance(dimensions, (bool, str)) and _spells_int(dimensions):
        changed["dimensions"] = int(dimensions)
    if changed.get("dimensions", dimensions) == 0:  # falsy, so absent (`if dimensions:`)
        changed["dimensions"] = None
    value = request.get("input")
    if isinstance(value, dict) and isinstance(value.get("text"), str):  # {"text": ...} records
        changed["input"] = value["text"]
    if (
        isinstance(value, list)
        and any(_is_id(v) for v in value)  # token ids, not a list of texts like ["1", "2"]
        and all(_is_id(v) or _spells_int(v) for v in value)
    ):
        changed["input"] = [int(v) for v in value]
    return changed


def _spells_int(value: object) -> bool:
    if isinstance(value, bool):
        return True
    return isinstance(value, str) and value.strip().lstrip("-").isdigit()


def _load_object(body: bytes, served: str, lenient: bool = False) -> dict[str, Any]:
    """The JSON object with a known model; unknown top-level fields are ignored."""
    try:
        request = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"Request body is not valid JSON: {exc}") from None
    if not isinstance(request, dict):
        raise ApiError(400, "Request body must be a JSON object")
    model = request.get("model")
    if lenient and (model is None or not isinstance(model, str)):  # one model: no name needed
        model = served
    if not isinstance(model, str) or not model:
        raise ApiError(400, "You must provide a model parameter", "model")
    if model != served and not lenient:
        raise ApiError(404, f"The model '{model}' does not exist", "model", "model_not_found")
    return request


def _parse_input(value: object, vocab_size: int) -> Inputs:
    if isinstance(value, str):
        return [_check_text(value)]
    if not isinstance(value, list):
        raise _bad_input("'input' must be a string, a list of strings, or token ids")
    if not value:
        raise _bad_input("'input' must not be empty")
    if all(_is_id(item) for item in value):
        return [_check_ids(value, vocab_size)]  # one sequence: not a batch
    if len(value) > MAX_INPUTS:
        raise _bad_input(f"'input' may hold at most {MAX_INPUTS} items")
    if all(isinstance(item, str) for item in value):
        return [_check_text(item) for item in value]
    if all(isinstance(item, list) for item in value):
        return [_check_ids(item, vocab_size) for item in value]
    raise _bad_input("'input' must be all strings, all token ids, or all lists of token ids")


def _check_text(text: str) -> str:
    if not text:
        raise _bad_input("'input' must not contain empty strings")
    _check_encodable(text, "input")
    return text


def _check_encodable(text: str, param: str) -> None:
    # json.loads accepts lone surrogates ("\ud800"); the tokenizer cannot take them.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ApiError(400, f"'{param}' is not valid Unicode text: {exc.reason}", param) from None


def _check_ids(sequence: list[Any], vocab_size: int) -> list[int]:
    if not sequence:
        raise _bad_input("token id lists must not be empty")
    for token in sequence:
        if not _is_id(token):
            raise _bad_input(f"token ids must be integers, got {token!r}")
        if not 0 <= token < vocab_size:
            raise _bad_input(f"token id {token} is outside the vocabulary [0, {vocab_size})")
    return cast(list[int], sequence)


def _parse_dimensions(value: object, native: int) -> int | None:
    if value is None:
        return None
    if not _is_id(value):
        raise ApiError(400, f"'dimensions' must be an integer, got {value!r}", "dimensions")
    if not 1 <= cast(int, value) <= native:
        message = f"'dimensions' must be between 1 and {native}, got {value}"
        raise ApiError(400, message, "dimensions")
    return cast(int, value)


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # bool is an int subclass


def _bad_input(message: str) -> ApiError:
    return ApiError(400, message, "input")
