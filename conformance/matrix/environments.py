"""Each peer's own virtual environment, under the cache folder, installed when it is missing or
when what it should hold changed (a stamp names the installed spec's digest)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from conformance.files import write_text_atomically
from conformance.matrix.peers import PROJECT, Environment, expand, tool_paths

STAMP = "installed.sha256"


class InstallError(RuntimeError):
    """An environment could not be installed; the message says which step and why."""


def cache_root() -> Path:
    """$XDG_CACHE_HOME/embedding-conformance/peers, else ~/.cache/...: peers' environments
    are large (bare vLLM ~4 GB each) and reused from one build to the next."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "embedding-conformance" / "peers"


def python_of(environment: str, root: Path) -> Path:
    if environment == PROJECT:
        return Path(sys.executable)
    return root / environment / "venv" / "bin" / "python"


def is_installed(environment: Environment, root: Path) -> bool:
    stamp = root / environment.name / STAMP
    return (
        python_of(environment.name, root).exists()
        and stamp.exists()
        and stamp.read_text().strip() == environment.digest()
    )


def ensure(environment: Environment, root: Path, model: Path, log: Path) -> Path:
    """The environment's Python, installing first when needed; InstallError otherwise."""
    python = python_of(environment.name, root)
    if is_installed(environment, root):
        return python
    envdir = root / environment.name
    envdir.mkdir(parents=True, exist_ok=True)
    (envdir / STAMP).unlink(missing_ok=True)
    values = {"python": str(python), "bin": str(python.parent), "envdir": str(envdir)}
    values |= {"model": str(model), **tool_paths()}
    with log.open("a", encoding="utf-8") as out:
        if not python.exists():
            _step([sys.executable, "-m", "venv", str(python.parents[1])], envdir, out, log)
        _step([str(python), "-m", "pip", "install", "--upgrade", "pip"], envdir, out, log)
        for packages in environment.installs:
            _step([str(python), "-m", "pip", "install", *packages], envdir, out, log)
        for command in environment.after:
            _step([expand(part, values) for part in command], envdir, out, log)
    write_text_atomically(envdir / STAMP, environment.digest() + "\n")
    return python


def _step(command: Sequence[str], cwd: Path, out: IO[str], log: Path) -> None:
    print(f"$ {' '.join(command)}", file=out, flush=True)
    completed = subprocess.run(
        command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=_install_env(), check=False
    )
    if completed.returncode != 0:
        raise InstallError(
            f"{' '.join(command[:6])} ... exited with {completed.returncode} "
            f"(see {log}):\n{tail(log)}"
        )


def _install_env() -> Mapping[str, str]:
    return {
        **os.environ,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


def installed_version(python: Path, package: str) -> str:
    """The version of ``package`` in the environment of ``python`` ('?' if it cannot tell)."""
    completed = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return completed.stdout.strip() if completed.returncode == 0 else "?"


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
