"""Published files name no build machine: its paths become neutral names before publication.

A column's results.json holds what the suite saw, and on the build machine that includes paths:
the scratch report folder among the options, the bundled golden's folder as the reference, the
runtime folder of a curl reproducer's body file, and file names of the build's home, cache and
virtual environments in the tracebacks some servers answer with. They say nothing about the
server and leak the machine, so the build rewrites them (``<cache>``, ``<tmp>``, ``~``,
``<packages>/fastapi/routing.py``...) in the document, seals its integrity digest again over
the result and renders report.html from it, as the suite itself would.

A user's own run keeps its paths: there the reproducer's body file is real and worth naming.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from conformance.references import golden_root
from conformance.reporting import integrity

_SEGMENT = r"""[^\s/\\"'<>:;,()\[\]{}|]+"""  # one path segment, as found in running text
_BEFORE = r"(?<![\w.<>~-])"  # the start of a path, not the middle of a word, a URL or a path
_OPTIONAL_HEAD = rf"(?:<[\w-]+>|~)?(?:/{_SEGMENT})*"  # absolute, or already made neutral
# where any virtual environment or Python installation keeps its packages and its stdlib
PACKAGES = re.compile(rf"{_BEFORE}{_OPTIONAL_HEAD}/(?:site|dist)-packages(?=/|\b)")
STDLIB = re.compile(rf"{_BEFORE}{_OPTIONAL_HEAD}/lib/python3\.\d+(?=/)")
# an absolute path under a folder that is the build machine's, never the server's answer
MACHINE_PATH = re.compile(
    rf"{_BEFORE}/(?:root|home|tmp|usr|opt|var|run/user|Users|private/var)(?:/{_SEGMENT})+"
    rf"|golden:/{_SEGMENT}(?:/{_SEGMENT})*"  # a golden named by its folder, not its name
    rf"|{_BEFORE}(?:/{_SEGMENT})*/(?:site-packages|dist-packages|\.venv|\.cache)(?:/|\b)"
)


@dataclass(frozen=True)
class Scrubber:
    """Each machine path to replace and its neutral name, the longest path first (a path
    inside another is replaced before its parent)."""

    paths: tuple[tuple[str, str], ...]

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        """Any of the paths, the longest that matches (alternatives are tried in order)."""
        alternatives = "|".join(re.escape(path) for path, _ in self.paths) or "(?!)"
        # whole folders only: '/tmp' in '/tmp/x', not in '/tmpfoo' (a path ending in '/' is one)
        return re.compile(rf"{_BEFORE}(?:{alternatives})(?:(?<=/)|(?![\w.-]))")

    @cached_property
    def _names(self) -> dict[str, str]:
        return dict(self.paths)

    def text(self, value: str) -> str:
        if "/" not in value:
            return value
        value = self._pattern.sub(lambda match: self._names[match.group(0)], value)
        value = PACKAGES.sub("<packages>", value)
        return STDLIB.sub("<stdlib>", value)

    def document(self, value: Any) -> Any:
        """A JSON value with every string scrubbed (keys too: they are data in places)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(key): self.document(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.document(item) for item in value]
        return value


def scrubber(model: Path, cache: Path) -> Scrubber:
    """The build machine's paths: the model folder (the link the peers serve and what it
    points to), the peers' cache, this Python, the project, temp and runtime folders, home."""
    project = Path(__file__).resolve().parents[2]  # the checkout, in an editable install
    named: list[tuple[Path | str, str]] = [
        (model, "<model>"),
        (model.resolve(), "<model>"),
        (cache, "<cache>"),
        (cache.resolve(), "<cache>"),
        (project, "<project>"),
        (tempfile.gettempdir(), "<tmp>"),
        (os.environ.get("XDG_RUNTIME_DIR", ""), "<runtime>"),
        (Path.home(), "~"),
    ]
    # a Python's prefix may be /usr itself: replaced only when it is a folder of its own
    pythons = [(sys.prefix, "<python>"), (sys.base_prefix, "<python>")]
    named += [(path, name) for path, name in pythons if len(Path(path).parts) > 2]
    named.append((sysconfig.get_paths()["stdlib"], "<stdlib>"))
    # the bundled golden, named as --reference names it: 'golden:all-MiniLM-L6-v2/vllm'
    paths = [(f"golden:{golden_root()}/", "golden:"), (str(golden_root()), "<golden>")]
    paths += [(str(path), name) for path, name in named if str(path) not in ("", "/")]
    return Scrubber(tuple(sorted(set(paths), key=lambda pair: -len(pair[0]))))


def scrub_results(document: dict[str, Any], scrub: Scrubber) -> dict[str, Any]:
    """The results document with no machine path, sealed again: its integrity digest covers
    what is published. (The matrix signs nothing; a signature would not survive the edit.)"""
    scrubbed: dict[str, Any] = scrub.document(
        {key: value for key, value in document.items() if key != integrity.KEY}
    )
    return integrity.seal(scrubbed)


def machine_paths(text: str) -> list[str]:
    """The build-machine paths left in ``text`` (absolute paths under /root, /home, /tmp, /usr,
    /opt, /var, any under a site-packages, .venv or .cache folder, a golden named by its
    folder), each once."""
    return sorted({match.group(0) for match in MACHINE_PATH.finditer(text)})


def machine_paths_in(files: Iterable[Path]) -> dict[str, list[str]]:
    """The machine paths of each file that holds any, by file name."""
    found = {}
    for path in files:
        paths = machine_paths(path.read_text(encoding="utf-8"))
        if paths:
            found[str(path)] = paths
    return found
