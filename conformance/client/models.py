"""Decode the answer to ``GET /v1/models``: the one reading of that route.

One policy for every caller: decoding never raises. It keeps every well-formed entry (an object
with a string ``id``) and says in words what else it found wrong; each caller decides what a
problem costs. The preflight, which picks the model a whole run sends, trusts only a list
without one; the fingerprint of a report, a label, takes the ids it can read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from conformance.client.decode import json_type


@dataclass(frozen=True)
class ListedModel:
    id: str
    max_model_len: int | None = None  # the context in tokens, where the server states it (vLLM)


@dataclass(frozen=True)
class ModelList:
    models: tuple[ListedModel, ...]  # the well-formed entries, in the server's order
    problem: str | None = None  # what is malformed, in words; None for a well-formed list

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(model.id for model in self.models)

    def context_of(self, model_id: str) -> int | None:
        """The context length stated for ``model_id``; None when it states none."""
        return next((m.max_model_len for m in self.models if m.id == model_id), None)


def _listed_model(entry: Any) -> ListedModel | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        return None
    length = entry.get("max_model_len")
    return ListedModel(entry["id"], length if type(length) is int and length > 0 else None)


def _entries(document: Any) -> tuple[list[Any], str | None]:
    """The 'data' array of the answer, or why there is none."""
    if not isinstance(document, dict):
        return [], f"the answer is a JSON {json_type(document)}, not an object"
    data = document.get("data")
    if not isinstance(data, list):
        found = "no 'data'" if data is None else f"'data' is a JSON {json_type(data)}"
        return [], f"{found}, not an array of models"
    return data, None if data else "'data' lists no model"


def decode_models(status: int, raw: bytes) -> ModelList:
    """The models an answer of HTTP ``status`` with body ``raw`` lists, and what is wrong
    with it."""
    if status != 200:
        return ModelList((), f"HTTP {status}")
    try:
        document = json.loads(raw)
    except ValueError:
        return ModelList((), "the answer is not JSON")
    entries, problem = _entries(document)
    models = [_listed_model(entry) for entry in entries]
    malformed = [i for i, model in enumerate(models) if model is None]
    if malformed:
        problem = (
            f"{len(malformed)} of {len(models)} entries are not an object with a string 'id' "
            f"(the first at index {malformed[0]}: {json.dumps(entries[malformed[0]])[:80]})"
        )
    return ModelList(tuple(m for m in models if m is not None), problem)
