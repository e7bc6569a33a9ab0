"""The packaged input corpus, read with importlib.resources so it works from any directory."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Case:
    id: str  # stable: failure messages, baselines and -k selections refer to it
    text: str
    tags: tuple[str, ...]


@cache
def load_cases(name: str = "core") -> tuple[Case, ...]:
    path = resources.files("conformance") / "fixtures" / f"{name}.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    return tuple(Case(c["id"], c["text"], tuple(c["tags"])) for c in document["cases"])


def cases_tagged(tag: str, name: str = "core") -> tuple[Case, ...]:
    return tuple(case for case in load_cases(name) if tag in case.tags)


def case(case_id: str, name: str = "core") -> Case:
    for candidate in load_cases(name):
        if candidate.id == case_id:
            return candidate
    raise KeyError(f"no case {case_id!r} in corpus {name!r}")
