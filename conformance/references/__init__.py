"""Reference vectors a server is compared with: one interface, several sources.

    golden:NAME                  a golden bundled with the package (``all-MiniLM-L6-v2`` is its
                                 sentence-transformers recording, ``all-MiniLM-L6-v2/vllm`` the
                                 bare-vLLM one)
    golden:DIR                   a golden directory recorded with ``embedding-conformance golden``
    sentence-transformers:PATH   the model run here, now
    http(s)://...                a live reference endpoint (e.g. bare vLLM), asked now

Without ``--reference``, a bundled golden is used when the served model is one of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from conformance.corpus import Case, load_cases
from conformance.references.recording import (
    MANIFEST,
    GoldenError,
    Recording,
    corpus_hash,
    load,
)

Kind = Literal["golden", "sentence-transformers", "endpoint"]
DEFAULT_SOURCE = "sentence-transformers"  # the recording a bare golden:NAME means
NONE = "none"


def reference_cases() -> tuple[Case, ...]:
    return load_cases("reference")


def golden_root() -> Path:
    return Path(str(resources.files("conformance.golden")))


def bundled_models() -> list[str]:
    """The bundled goldens' model folders: those with their default source recorded. Anything
    else there is not a model (the __pycache__ Python writes beside __init__.py)."""
    root = golden_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / DEFAULT_SOURCE / MANIFEST).is_file())


@dataclass(frozen=True)
class ReferenceSpec:
    kind: Kind
    location: str  # golden directory, model folder or URL
    label: str  # for the report header
    golden: Recording | None = None  # a golden, read (and verified) when it is named

    def __str__(self) -> str:
        return self.label

    @property
    def model(self) -> str | None:
        """The reference's model, where it is known without asking: a golden's manifest, a
        sentence-transformers folder's name (a live endpoint's is the one it serves)."""
        if self.golden is not None:
            return self.golden.model
        return Path(self.location).name if self.kind == "sentence-transformers" else None

    @property
    def spec(self) -> str:
        """The ``--reference`` text that names this reference again (for xdist workers)."""
        prefix = {"golden": "golden:", "sentence-transformers": "sentence-transformers:"}
        return prefix.get(self.kind, "") + self.location


def bundled_golden(name: str) -> Path | None:
    """``MODEL`` or ``MODEL/SOURCE`` among the bundled goldens; the model matches without case
    and without an organisation prefix (``sentence-transformers/all-MiniLM-L6-v2``)."""
    by_lower = {m.lower(): m for m in bundled_models()}
    head, _, tail = name.rpartition("/")
    parent = head.rpartition("/")[2]
    if tail.lower() in by_lower:  # MODEL or ORG/MODEL
        model, source = by_lower[tail.lower()], DEFAULT_SOURCE
    elif parent.lower() in by_lower:  # MODEL/SOURCE or ORG/MODEL/SOURCE
        model, source = by_lower[parent.lower()], tail
    else:
        return None
    path = golden_root() / model / source
    return path if path.is_dir() else None


def parse_reference(text: str | None, served_model: str) -> ReferenceSpec | None:
    """What ``--reference`` names (or the bundled default for the served model); None when
    there is no reference. Raises ValueError or GoldenError with a message for the user."""
    if text is None:
        path = bundled_golden(served_model)
        if path is None:
            return None
        label = (
            f"bundled golden {path.parent.name}/{path.name} (default for model {served_model!r})"
        )
        return ReferenceSpec("golden", str(path), label, load_golden(path))
    if text == NONE:
        return None
    if text.startswith("golden:"):
        name = text.removeprefix("golden:")
        path = bundled_golden(name) if not Path(name).is_dir() else Path(name)
        if path is None:
            known = ", ".join(bundled_models()) or "none"
            raise ValueError(f"no golden {name!r}: not a directory, nor a bundled one ({known})")
        # read here: a damaged or outdated golden is a usage error, before any test
        return ReferenceSpec("golden", str(path), f"golden {path}", load_golden(path))
    if text.startswith("sentence-transformers:"):
        folder = text.removeprefix("sentence-transformers:")
        if not Path(folder).is_dir():
            raise ValueError(f"{folder!r} is not a sentence-transformers model folder")
        return ReferenceSpec("sentence-transformers", folder, f"sentence-transformers {folder}")
    if text.startswith(("http://", "https://")):
        return ReferenceSpec("endpoint", text, f"live endpoint {text}")
    raise ValueError(
        f"{text!r}: use golden:NAME, golden:DIR, sentence-transformers:PATH, a URL, or none"
    )


def load_golden(directory: str | Path) -> Recording:
    """A golden directory, checked against its manifest and against this corpus."""
    recording = load(Path(directory))
    recorded = recording.manifest.get("corpus", {}).get("sha256")
    if recorded != corpus_hash(reference_cases()):
        raise GoldenError(
            f"{directory} was recorded for another version of the reference corpus: "
            "record it again with this version (embedding-conformance golden record)"
        )
    return recording


__all__ = [
    "GoldenError",
    "Recording",
    "ReferenceSpec",
    "bundled_golden",
    "load_golden",
    "parse_reference",
    "reference_cases",
]
