"""The reference server's own reading of a sentence-transformers model folder: the modules it
declares, in the order sentence-transformers loads them, its pooling, and whether its output is
unit length.

The suite records a golden's pooling and normalization with a reader of its own
(``conformance.references.sources``). The two are kept apart on purpose: one reader used on both
sides would put the same misreading into the server's vectors and into the suite's expectation,
and the suite would bless it (DESIGN.md, principle 8).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A folder without modules.json is a plain transformers encoder; sentence-transformers gives it
# a mean Pooling and nothing after it.
PLAIN_ENCODER = ("Transformer", "Pooling")
DEFAULT_POOLING = "mean"
# The boolean keys older sentence-transformers wrote instead of one "pooling_mode", in the order
# it concatenates several pooled vectors.
POOLING_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}


class ModelFolderError(ValueError):
    """The folder's module list or pooling config cannot be read."""


@dataclass(frozen=True)
class ModelLayout:
    """What a model folder declares, as the server computes with it."""

    kinds: tuple[str, ...]  # each module's class name, in load order ("Transformer", "Dense", ...)
    pooling: str | None  # the Pooling module's mode ("mean", "cls", ...; "+"-joined for several)

    @property
    def normalized(self) -> bool:
        """Unit-length output: a Normalize module is the last step (one before a Dense would
        not make the output unit length)."""
        return bool(self.kinds) and self.kinds[-1] == "Normalize"

    @property
    def head(self) -> range:
        """Positions of the modules that run on the pooled vector (a Dense projection): after
        the Pooling, before a final Normalize."""
        if "Pooling" not in self.kinds:
            return range(0)
        end = len(self.kinds) - 1 if self.normalized else len(self.kinds)
        return range(self.kinds.index("Pooling") + 1, end)


def read_layout(folder: str | Path) -> ModelLayout:
    """The layout ``folder`` declares in modules.json and its Pooling module's config."""
    root = Path(folder)
    listing = root / "modules.json"
    if not listing.is_file():
        return ModelLayout(PLAIN_ENCODER, DEFAULT_POOLING)
    modules = _json_file(listing)
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        raise ModelFolderError(f"{listing}: not a list of modules")
    kinds = tuple(_class_name(module, listing) for module in modules)
    pooling = None
    if "Pooling" in kinds:
        config = root / str(modules[kinds.index("Pooling")].get("path", "")) / "config.json"
        pooling = _pooling_mode(_json_file(config), config)
    return ModelLayout(kinds, pooling)


def _class_name(module: dict[str, Any], listing: Path) -> str:
    """The module's class: the last part of its dotted "type"."""
    kind = module.get("type")
    if not isinstance(kind, str) or not kind:
        raise ModelFolderError(f"{listing}: a module without a type: {module}")
    return kind.rsplit(".", 1)[-1]


def _pooling_mode(config: Any, path: Path) -> str:
    """A "pooling_mode" name (or list of names) wins, as in sentence-transformers; else the
    legacy flags that are on; none on (or none given) is mean pooling."""
    if not isinstance(config, dict):
        raise ModelFolderError(f"{path}: not a Pooling config")
    named = config.get("pooling_mode")
    if isinstance(named, str):
        return named
    if isinstance(named, list) and named and all(isinstance(n, str) for n in named):
        return "+".join(named)
    on = [mode for key, mode in POOLING_FLAGS.items() if config.get(key) is True]
    return "+".join(on) or DEFAULT_POOLING


def _json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelFolderError(f"{path}: {exc}") from None
