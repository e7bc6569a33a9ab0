"""A model name given to the server means one folder: bundled, a variant, a fetched model from
the cache (checked against its pins), or a local folder; anything else is refused in one line
that says what to do. And the restart policy of a worker that keeps dying."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance import variants
from conformance.models.fetch import FetchedModel
from conformance.models.pinned import MODELS
from conformance.server.model_names import BUNDLED_MODEL, ModelNotServable, resolve_model
from conformance.server.restarts import (
    LONGEST_PAUSE,
    RESTART_WINDOW,
    next_restart,
    within_window,
)
from conformance.variants import file_sha256


def fetched_style(cache: Path, name: str) -> FetchedModel:
    """A small folder in the cache as `models fetch` leaves one, and its pins."""
    folder = cache / name
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "bert"}')
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode": "mean"}')
    files = {
        path.relative_to(folder).as_posix(): file_sha256(path)
        for path in folder.rglob("*")
        if path.is_file()
    }
    return FetchedModel(name=name, about="a test model", files=files)


def test_a_fetched_model_is_served_from_the_cache_by_its_name(tmp_path: Path) -> None:
    model = fetched_style(tmp_path, "tiny-fetched")
    assert resolve_model("tiny-fetched", {model.name: model}, tmp_path) == (
        "tiny-fetched",
        str(tmp_path / "tiny-fetched"),
    )


def test_a_fetchable_model_not_fetched_yet_names_the_command_that_fetches_it(
    tmp_path: Path,
) -> None:
    model = fetched_style(tmp_path / "elsewhere", "tiny-fetched")
    with pytest.raises(ModelNotServable) as refused:
        resolve_model("tiny-fetched", {model.name: model}, tmp_path)
    said = str(refused.value)
    assert "not fetched yet" in said and "'embedding-conformance models fetch tiny-fetched'" in said
    assert "\n" not in said


def test_a_fetched_folder_that_differs_from_its_pins_is_refused(tmp_path: Path) -> None:
    model = fetched_style(tmp_path, "tiny-fetched")
    (tmp_path / "tiny-fetched" / "config.json").write_text('{"model_type": "roberta"}')
    with pytest.raises(ModelNotServable, match=r"not as pinned \(config.json has sha256"):
        resolve_model("tiny-fetched", {model.name: model}, tmp_path)


def test_the_gguf_points_to_its_float32_conversion(tmp_path: Path) -> None:
    with pytest.raises(ModelNotServable, match=r"as 'nomic-embed-text-v1\.5'"):
        resolve_model("nomic-embed-text-v1.5-gguf", MODELS, tmp_path)


def test_every_name_models_list_shows_has_a_meaning(tmp_path: Path) -> None:
    """Bundled and variants serve; every fetchable one is served or refused with what to do."""
    assert resolve_model(None)[0] == resolve_model(BUNDLED_MODEL)[0] == BUNDLED_MODEL
    for name in variants.VARIANTS:
        assert resolve_model(name)[0] == name
    for name in MODELS:
        with pytest.raises(ModelNotServable, match=r"embedding-conformance models fetch|GGUF"):
            resolve_model(name, MODELS, tmp_path)


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ModelNotServable) as refused:
        resolve_model("no-such-model")
    assert all(name in str(refused.value) for name in [BUNDLED_MODEL, *MODELS])


def test_restarts_come_at_once_then_after_doubling_pauses_then_stop() -> None:
    pauses, recent, now = [], [], 0.0
    while (pause := next_restart(within_window(recent, now), 5)) is not None:
        pauses.append(pause)
        recent.append(now + pause)
        now += pause + 0.5  # the restarted worker dies half a second later
    assert pauses == [0.0, 1.0, 2.0, 4.0, LONGEST_PAUSE]
    # a worker that lived through the window starts afresh
    assert next_restart(within_window(recent, now + RESTART_WINDOW), 5) == 0.0
    assert next_restart([], 0) is None  # --max-restarts 0: never


@pytest.mark.parametrize("engine", ["sentence-transformers", "vllm"])
def test_a_model_that_is_not_there_is_refused_before_the_engine_is_imported(
    tmp_path: Path, engine: str
) -> None:
    """A worker restarted in a crash loop pays for the name check only, not for importing torch
    (seconds of CPU at every restart); vLLM, not installed here, is not even needed to refuse."""
    code = (
        "import sys\n"
        "from conformance.server.engines import load_engine\n"
        "from conformance.server.model_names import ModelNotServable\n"
        "try:\n"
        f"    load_engine({engine!r}, {str(tmp_path / 'gone')!r}, None)\n"
        "except ModelNotServable as exc:\n"
        "    print('refused:', exc)\n"
        "print('imported:', sorted({'torch', 'vllm'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "refused: model" in done.stdout and "nor a local folder" in done.stdout, done.stdout
    assert "imported: []" in done.stdout, done.stdout
