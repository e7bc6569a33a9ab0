"""What the clients people point at embedding servers send and read, one profile per client,
each read from the client's own source at a pinned version (issue 58, item 1).

A profile (``<name>.toml`` beside this module) holds:

- who: ``name``, ``title``, ``ecosystem`` (pypi, npm, maven, go, cli), ``package``, ``version``
  (the release whose source was read; ``version_note`` when it is not the newest), ``call``;
- ``[request]``: ``method``, ``path``, ``content_type``, ``headers`` (every header sent by
  default: the value, or a ``<placeholder>`` where it varies), ``defaults`` (body fields the
  client adds beyond the caller's model and input), ``json_encoding``, ``input_forms``,
  ``transforms`` (what it does to the input before sending), ``max_inputs_per_request`` (when
  it splits a call), ``timeout_s`` (seconds, or "none"), ``retries``;
- ``[answer]``: ``reads``, ``requires`` (what raises when absent or mistyped),
  ``decodes_base64`` (how, or never), ``order`` (listed order or sorted by index), ``other``;
- ``[[options]]``: a common option and exactly what it sends;
- ``[[source]]``: for every claim above, ``what`` it shows and where: ``file`` and ``lines``
  (inside the package, or ``repo`` at ``commit``; "n/a" for a request captured on loopback)
  or a documentation ``url``. ``note`` and ``*_note`` fields explain a value where the source
  needs it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ECOSYSTEMS = ("pypi", "npm", "maven", "go", "cli")
REQUIRED = {
    "": ("name", "title", "ecosystem", "package", "version", "call"),
    "request": ("method", "path", "content_type", "headers", "defaults", "input_forms"),
    "answer": ("reads", "decodes_base64", "order"),
}


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    ecosystem: str
    package: str
    version: str
    call: str
    request: Mapping[str, Any]
    answer: Mapping[str, Any]
    options: tuple[Mapping[str, Any], ...]
    sources: tuple[Mapping[str, Any], ...]
    notes: Mapping[str, str]  # the top-level *_note and note fields

    @property
    def default_body(self) -> dict[str, Any]:
        """What the client sends for ``call`` with a model and an input, beyond those two."""
        return dict(self.request["defaults"])

    @property
    def timeout_s(self) -> float | None:
        """Seconds a request may take before the client gives up; None: it waits for ever."""
        value = self.request.get("timeout_s", "none")
        return None if value == "none" else float(value)


def problems(raw: Mapping[str, Any], stem: str) -> list[str]:
    """What keeps a parsed profile file ``stem``.toml from being a profile; empty when it is."""
    found = []
    for table, keys in REQUIRED.items():
        section = raw if not table else raw.get(table, {})
        found += [f"{table or 'top level'}: {key} missing" for key in keys if key not in section]
    if raw.get("name") != stem:
        found.append(f"name {raw.get('name')!r} is not the file's name {stem!r}")
    if raw.get("ecosystem") not in ECOSYSTEMS:
        found.append(f"ecosystem {raw.get('ecosystem')!r} not one of {', '.join(ECOSYSTEMS)}")
    timeout = raw.get("request", {}).get("timeout_s", "none")
    if timeout != "none" and not isinstance(timeout, int | float):
        found.append(f"request.timeout_s {timeout!r} is neither seconds nor 'none'")
    sources = raw.get("source", [])
    if not sources:
        found.append("no [[source]]: every claim is read from the client's source")
    for number, source in enumerate(sources, 1):
        where = ("url",) if "url" in source else ("file", "lines")  # a page, or lines of a file
        missing = [key for key in (*where, "what") if not source.get(key)]
        if missing:
            found.append(f"source {number}: {', '.join(missing)} missing")
    return found


def load(raw: Mapping[str, Any]) -> Profile:
    notes = {key: str(value) for key, value in raw.items() if key.endswith("note")}
    return Profile(
        name=raw["name"],
        title=raw["title"],
        ecosystem=raw["ecosystem"],
        package=raw["package"],
        version=raw["version"],
        call=raw["call"],
        request=raw["request"],
        answer=raw["answer"],
        options=tuple(raw.get("options", ())),
        sources=tuple(raw["source"]),
        notes=notes,
    )


def profiles() -> tuple[Profile, ...]:
    """Every packaged profile, by name; a file that is not a profile is an error that says why."""
    found = []
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        raw = tomllib.loads(entry.read_text(encoding="utf-8"))
        wrong = problems(raw, entry.name.removesuffix(".toml"))
        if wrong:
            raise ValueError(f"client profile {entry.name}: {'; '.join(wrong)}")
        found.append(load(raw))
    return tuple(found)
