"""The suite's plain data: a decoded embeddings response and an error body.

Everything past the HTTP client sees these, never raw JSON. This module depends on numpy and
the standard library only, so the pure checks that judge it carry no HTTP or pytest with them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float64]
Matrix = npt.NDArray[np.float64]  # [count, dim]: one row per input

# How an item's embedding arrived:
#   float        a flat JSON array of numbers
#   base64       a string that decoded to little-endian float32 values
#   nested       an array of arrays (e.g. one row per token); the vector is the flattened matrix
#   non-numeric  an array holding strings, nulls or booleans (each unusable element becomes NaN)
#   undecodable  anything else (missing, wrong type, bad base64); no vector
Encoding = Literal["float", "base64", "nested", "non-numeric", "undecodable"]


@dataclass(frozen=True)
class Item:
    """One element of ``data``: its declared fields as sent, and the decoded vector."""

    object: Any
    index: Any
    encoding: Encoding
    vector: Vector | None
    wire_type: str = ""  # JSON type of the 'embedding' value as sent: string, array, null...
    problem: str | None = None  # why the embedding is not a clean vector, for messages
    base64_bytes: int | None = None  # decoded payload size, for base64 items


@dataclass(frozen=True)
class Usage:
    prompt_tokens: Any
    total_tokens: Any


@dataclass(frozen=True)
class EmbeddingBatch:
    """A decoded response. Scalar fields keep the value the server sent, for envelope checks."""

    object: Any
    model: Any
    usage: Usage | None
    items: tuple[Item, ...]
    data_is_list: bool = True

    @property
    def vectors(self) -> list[Vector | None]:
        return [item.vector for item in self.items]

    @property
    def first_vector(self) -> Vector | None:
        return self.items[0].vector if self.items else None

    def matrix(self) -> Matrix:
        """All vectors stacked as [count, dim]; raises ValueError when they cannot be stacked."""
        vectors = self.vectors
        if any(vector is None for vector in vectors):
            raise ValueError("some items carry no decodable vector")
        lengths = {len(vector) for vector in vectors if vector is not None}
        if len(lengths) > 1:
            raise ValueError(f"vectors of different lengths {sorted(lengths)} cannot be stacked")
        return np.stack([v for v in vectors if v is not None]) if vectors else np.zeros((0, 0))


@dataclass(frozen=True)
class ErrorBody:
    """What an error response carried: whether it was JSON, and its top-level 'error' object."""

    is_json: bool
    error: dict[str, Any] | None  # the 'error' object, when there is one

    @property
    def code(self) -> Any:
        return self.error.get("code") if self.error else None


@dataclass(frozen=True)
class RequestCount:
    """Requests a run sent to the endpoint, and what their answers said they cost: what a user
    of a paid or rate-limited endpoint needs to size a run (plain data: it travels from xdist's
    workers to the controller on the tests' reports)."""

    sent: int = 0  # every request, retries and probes included
    retries: int = 0  # of which: sent again after a 429 or 503
    tokens: int = 0  # usage.prompt_tokens of the embeddings answers (HTTP 200) that state it
    untold: int = 0  # embeddings answers (HTTP 200) that state no integer usage.prompt_tokens

    def __add__(self, other: RequestCount) -> RequestCount:
        return RequestCount(
            self.sent + other.sent,
            self.retries + other.retries,
            self.tokens + other.tokens,
            self.untold + other.untold,
        )

    def __sub__(self, other: RequestCount) -> RequestCount:
        return RequestCount(
            self.sent - other.sent,
            self.retries - other.retries,
            self.tokens - other.tokens,
            self.untold - other.untold,
        )

    def to_json(self) -> dict[str, int]:
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RequestCount:
        return cls(**{field.name: int(data.get(field.name, 0)) for field in fields(cls)})
