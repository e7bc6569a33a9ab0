"""The peers of the matrix, read from a TOML file (``peers.toml`` in this package by default).

Strings of a peer (URLs, files, suite arguments, commands) may name placeholders, filled in
when it starts: ``{model}`` (the model folder, named as the model is served), ``{work}`` (the
peer's scratch folder, emptied at each start), ``{port}``, ``{port2}``, ``{port3}`` (free ports
on 127.0.0.1); commands and their environment also ``{python}``, ``{bin}`` and ``{envdir}`` of
the environment they run in, and the paths of this package's tools (``TOOLS``). Loading checks
every peer completely, so a typo fails before anything is installed.
"""

from __future__ import annotations

import hashlib
import json
import string
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from itertools import pairwise
from pathlib import Path
from typing import Any

from conformance.models.pinned import MODELS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PROJECT = "project"  # the environment that runs this package (the bundled reference server)
PLACEHOLDERS = frozenset({"model", "work", "port", "port2", "port3"})  # anywhere in a peer
# Scripts of this package that a peer's environment runs by path with its own Python (they
# import nothing of the project): llama.cpp's quantizer, and its GGUF weights put back in a
# model folder (also what `golden record --from gguf:FILE` records from); by package-relative path
TOOLS = {"quantize": "matrix/quantize_gguf.py", "dequantize": "references/dequantize_gguf.py"}
COMMAND_PLACEHOLDERS = PLACEHOLDERS | {"python", "bin", "envdir", *TOOLS}  # commands, their env
INSTALL_PLACEHOLDERS = frozenset({"python", "bin", "envdir", "model", *TOOLS})  # install steps
LOOPBACK = "http://127.0.0.1:"


@dataclass(frozen=True)
class Environment:
    """A virtual environment of its own: pip installs in order, then commands run once."""

    name: str
    installs: tuple[tuple[str, ...], ...]
    after: tuple[tuple[str, ...], ...] = ()

    def digest(self) -> str:
        """Names what was asked to be installed: a change of it installs again."""
        spec = {"installs": self.installs, "after": self.after}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Process:
    argv: tuple[str, ...]
    ready: str  # a URL that answers 2xx once the process serves ("": no check, setup only)
    environment: str
    ready_text: str = ""  # ... and whose body holds this text
    env: Mapping[str, str] = field(default_factory=dict)
    setup: bool = False  # a command that must end with exit 0 (e.g. load a model), not a server


@dataclass(frozen=True)
class Peer:
    name: str  # the column's id and folder name
    title: str  # what the column is headed with, before the version
    package: str  # the distribution whose installed version the column shows
    homepage: str
    endpoint: str  # what the suite gets as --endpoint
    model: str  # what the suite gets as --model (the served name)
    processes: tuple[Process, ...]
    suite_args: tuple[str, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)  # written into {work} first
    start_timeout: float = 600.0
    unavailable: str = ""  # why this peer cannot run here (it is listed, not run)
    about: str = ""  # one line on what the column is (e.g. which backend a proxy fronts)
    # A model fetched from the package registries (`models fetch`) that {model} names instead
    # of the bundled all-MiniLM-L6-v2 ("": the bundled one)
    weights: str = ""

    @property
    def environments(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(process.environment for process in self.processes))

    @property
    def unreferenced(self) -> bool:
        """Judged with ``--reference none`` (no golden exists for what it serves): its vectors
        are compared with nothing, so it cannot be certified (``--certify`` refuses the pair)."""
        args = self.suite_args
        return "--reference=none" in args or ("--reference", "none") in pairwise(args)

    @property
    def gate_only(self) -> bool:
        """Judged by the gate's requirements alone against a baseline it records at its start
        (a gateway against the server it fronts): a part of the suite, which ``--certify``
        refuses."""
        return "--baseline" in self.suite_args and ("--requirements", "baseline.") in pairwise(
            self.suite_args
        )

    @property
    def certifiable(self) -> bool:
        return not (self.unreferenced or self.gate_only)


@dataclass(frozen=True)
class Catalogue:
    environments: Mapping[str, Environment]
    peers: tuple[Peer, ...]

    def peer(self, name: str) -> Peer:
        for peer in self.peers:
            if peer.name == name:
                return peer
        known = ", ".join(peer.name for peer in self.peers)
        raise ValueError(f"no peer named {name!r}; the peers are: {known}")


def default_path() -> Path:
    return Path(str(resources.files("conformance.matrix") / "peers.toml"))


def load(path: Path | None = None) -> Catalogue:
    """The peers of ``path`` (default: the packaged ``peers.toml``); ValueError naming the
    first problem."""
    path = path or default_path()
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the peers: {exc}") from None
    try:
        environments = {
            name: _environment(name, spec) for name, spec in document.get("environment", {}).items()
        }
        peers = tuple(_peer(spec, environments) for spec in document.get("peer", []))
    except KeyError as exc:
        raise ValueError(f"{path}: a peer, process or environment lacks the key {exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    names = [peer.name for peer in peers]
    if duplicates := sorted({name for name in names if names.count(name) > 1}):
        raise ValueError(f"{path}: peer names appear twice: {', '.join(duplicates)}")
    return Catalogue(environments, peers)


def _environment(name: str, spec: Mapping[str, Any]) -> Environment:
    installs = tuple(tuple(_strings(f"environment {name}: install", i)) for i in spec["install"])
    after = tuple(tuple(_strings(f"environment {name}: after", c)) for c in spec.get("after", []))
    for command in after:
        _check_placeholders(f"environment {name}", " ".join(command), INSTALL_PLACEHOLDERS)
    return Environment(name, installs, after)


def _peer(spec: Mapping[str, Any], environments: Mapping[str, Environment]) -> Peer:
    name = spec.get("name")
    if not isinstance(name, str) or not name.replace("-", "").replace(".", "").isalnum():
        raise ValueError(f"peer name {name!r}: letters, digits, '-' and '.' only")
    where = f"peer {name}"
    processes = tuple(_process(where, p, spec.get("environment", name)) for p in spec["process"])
    peer = Peer(
        name=name,
        title=spec["title"],
        package=spec["package"],
        homepage=spec["homepage"],
        endpoint=spec["endpoint"],
        model=spec["model"],
        processes=processes,
        suite_args=tuple(_strings(where, spec.get("suite_args", []))),
        files=dict(spec.get("files", {})),
        start_timeout=float(spec.get("start_timeout", 600)),
        unavailable=spec.get("unavailable", ""),
        about=spec.get("about", ""),
        weights=spec.get("weights", ""),
    )
    if peer.weights and peer.weights not in MODELS:
        known = ", ".join(MODELS)
        raise ValueError(f"{where}: weights {peer.weights!r}: not a model to fetch ({known})")
    for environment in peer.environments:
        if environment != PROJECT and environment not in environments:
            raise ValueError(f"{where}: no environment named {environment!r}")
    for text in (peer.endpoint, *(p.ready for p in processes if p.ready)):
        if not text.startswith(LOOPBACK):
            raise ValueError(f"{where}: {text!r} is not on {LOOPBACK} (peers serve loopback only)")
    for text in (peer.endpoint, *peer.files.values(), *peer.suite_args):
        _check_placeholders(where, text, PLACEHOLDERS)
    for process in processes:
        _check_placeholders(where, process.ready, PLACEHOLDERS)
        for text in (*process.argv, *process.env.values()):
            _check_placeholders(where, text, COMMAND_PLACEHOLDERS)
    return peer


def _process(where: str, spec: Mapping[str, Any], environment: str) -> Process:
    env = spec.get("env", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ValueError(f"{where}: a process's env must map names to strings")
    setup = bool(spec.get("setup", False))
    ready = spec.get("ready", "") if setup else spec["ready"]
    return Process(
        argv=tuple(_strings(where, spec["argv"])),
        ready=ready,
        environment=spec.get("environment", environment),
        ready_text=spec.get("ready_text", ""),
        env=dict(env),
        setup=setup,
    )


def _strings(where: str, value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{where}: expected a list of strings, got {value!r}")
    return value


def _check_placeholders(where: str, text: str, allowed: frozenset[str]) -> None:
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError as exc:
        raise ValueError(f"{where}: {text!r}: {exc}") from None
    if unknown := sorted(names - allowed):
        known = ", ".join(f"{{{name}}}" for name in sorted(allowed))
        raise ValueError(f"{where}: unknown placeholder {{{unknown[0]}}} in {text!r} ({known})")


def expand(text: str, values: Mapping[str, str]) -> str:
    return text.format_map(values)


def tool_paths() -> dict[str, str]:
    """What the ``TOOLS`` placeholders stand for: the scripts' paths."""
    package = Path(__file__).parents[1]
    return {name: str(package / script) for name, script in TOOLS.items()}
