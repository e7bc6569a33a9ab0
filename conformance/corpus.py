"""The packaged input corpus, read with importlib.resources so it works from any directory."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class Case:
    id: str  # stable: failure messages, baselines and -k selections refer to it
    text: str
    tags: tuple[str, ...]
    # The text as the reference's tokenizer reads it, when that deletes characters of it
    # (controls, BOM, zero-width characters, soft hyphens): the text whose vector is owed.
    reads_as: str | None = None

    def dropped(self) -> list[str]:
        """The characters the reference deletes from the text (U+XXXX), in code point order."""
        if self.reads_as is None:
            return []
        return [f"U+{ord(c):04X}" for c in sorted(set(self.text) - set(self.reads_as))]


@cache
def load_cases(name: str = "core") -> tuple[Case, ...]:
    path = resources.files("conformance.fixtures") / f"{name}.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    return tuple(
        Case(c["id"], c["text"], tuple(c["tags"]), c.get("reads_as")) for c in document["cases"]
    )


def cases_tagged(tag: str, name: str = "core") -> tuple[Case, ...]:
    return tuple(case for case in load_cases(name) if tag in case.tags)


@dataclass(frozen=True)
class BadRequest:
    """A request the server must reject ('reject'), should reject ('should-reject': judged by
    the SHOULD ``requirement``, for the reason ``because``), or may answer any way but a 5xx
    ('either'). One that is answered 200 must be answered like ``equivalent``, the valid
    request it stands for, when it names one."""

    id: str
    expect: str
    why: str
    body: Any  # a JSON document, or None when ``raw`` is sent instead
    raw: str | None
    content_type: str | None
    requirement: str | None = None  # for 'should-reject'
    because: str | None = None  # for 'should-reject': why rejecting is good hygiene
    equivalent: Any = None  # the valid JSON body this one stands for, if any

    def document(self, model: str) -> Any:
        """The JSON body with the served model filled in (None for raw cases)."""
        if self.raw is not None:
            return None
        return _with_model(self.body, model)

    def payload(self, model: str) -> bytes:
        if self.raw is not None:
            return self.raw.replace(MODEL_PLACEHOLDER, model).encode("utf-8")
        return json.dumps(self.document(model)).encode("ascii")

    def equivalent_document(self, model: str) -> Any:
        return None if self.equivalent is None else _with_model(self.equivalent, model)


def _with_model(body: Any, model: str) -> Any:
    return json.loads(json.dumps(body).replace(MODEL_PLACEHOLDER, model))


MODEL_PLACEHOLDER = "$MODEL"


@cache
def load_bad_requests() -> tuple[BadRequest, ...]:
    path = resources.files("conformance.fixtures") / "bad_requests.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    return tuple(
        BadRequest(
            c["id"],
            c["expect"],
            c["why"],
            c.get("body"),
            c.get("raw"),
            c.get("content_type", "application/json"),
            c.get("requirement"),
            c.get("because"),
            c.get("equivalent"),
        )
        for c in document["cases"]
    )


def case(case_id: str, name: str = "core") -> Case:
    for candidate in load_cases(name):
        if candidate.id == case_id:
            return candidate
    raise KeyError(f"no case {case_id!r} in corpus {name!r}")


@dataclass(frozen=True)
class Triplet:
    """An anchor, a paraphrase of it and an unrelated text (``fixtures/triplets.json``)."""

    id: str
    anchor: str
    paraphrase: str
    unrelated: str


@cache
def load_triplets() -> tuple[Triplet, ...]:
    path = resources.files("conformance.fixtures") / "triplets.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    return tuple(
        Triplet(t["id"], t["anchor"], t["paraphrase"], t["unrelated"]) for t in document["triplets"]
    )
