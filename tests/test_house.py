"""The house's plan (CONTRIBUTING.md, "Project layout"): every room of the package on a floor,
and every import points down. The rooms are drawn from the imports by scripts/house.py.

The pure rooms are held tighter than their floor: the checks, the verdict rules and the
renderers may import only the rooms named below them here (their runtime loads are probed in
tests/test_purity.py)."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parent.parent

PLAN = (  # floor 0 first
    # plain data, limits, what clients send
    {"wire", "tolerances", "corpus", "files", "runtime_dir", "api_key", "client_profiles"},
    {"requirements", "checks", "client", "variants"},  # the catalogue, pure checks, HTTP
    # verdict rules; fetched models; every option (the plugin's light path); the references
    {"verdicts", "models", "options", "references"},
    {"reporting", "server"},  # renderers; the bundled server
    {"run", "bench", "matrix", "ci"},  # a pytest run's machinery; the bench; the matrix; CI
    {"suite", "plugin", "cli"},  # the packaged tests, the pytest entry point, the commands
)
CHECKS = {"tolerances", "wire"}
VERDICTS = CHECKS | {"checks", "corpus", "requirements"}
PURE = {"checks": CHECKS, "verdicts": VERDICTS, "reporting": VERDICTS | {"verdicts", "files"}}


@pytest.fixture(scope="module")
def house() -> ModuleType:
    return load_script("house")


def floor_of(room: str) -> int:
    return next(level for level, rooms in enumerate(PLAN) if room in rooms)


def test_every_room_is_on_one_floor_of_the_plan(house: ModuleType) -> None:
    planned = [room for rooms in PLAN for room in rooms]
    assert sorted(planned) == sorted(set(planned))
    assert set(planned) == set(house.rooms())


def layout_floors() -> dict[int, set[str]]:
    """The rooms CONTRIBUTING.md's layout lists under each of its "# floor N" lines."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    layout = text.split("## Project layout", 1)[1].split("```")[1]
    floors: dict[int, set[str]] = {}
    for line in layout.splitlines():
        if heading := re.match(r"  # floor (\d+)", line):
            floor = floors.setdefault(int(heading[1]), set())
        elif room := re.match(r"  (\w+)(?:\.py|/) ", line):
            floor.add(room[1])
    return floors


def test_the_documented_layout_is_the_plan() -> None:
    assert layout_floors() == dict(enumerate(PLAN))


def test_no_import_points_up_or_sideways(house: ModuleType) -> None:
    upward = {
        (room, target)
        for room, targets in house.arrows().items()
        for target in targets
        if floor_of(target) >= floor_of(room)
    }
    assert upward == set()


@pytest.mark.parametrize("room", sorted(PURE))
def test_a_pure_room_imports_only_what_lies_below_it(house: ModuleType, room: str) -> None:
    assert house.arrows()[room] - PURE[room] == set()


def test_the_drawing_sees_lazy_and_typing_imports(house: ModuleType) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from conformance.run.session import ConformanceSession\n"
        "def later():\n    from conformance import variants\n"
    )
    named = {house.room_of(m) for m in house.imported(source)}
    assert {"run", "variants"} <= named


def test_a_cycle_has_no_floors(house: ModuleType) -> None:
    with pytest.raises(ValueError, match="cycle: a -> b -> a"):
        house.floors({"a": {"b"}, "b": {"a"}})
    assert house.floors({"a": {"b"}, "b": set()}) == {"a": 1, "b": 0}


# Test folders that are no room of the package: helpers, end-to-end suite runs, bare vLLM's
# tests (tox -e vllm), the tests of scripts/ and of the guides
BESIDE_THE_ROOMS = {"support", "e2e", "vllm", "scripts", "docs"}
ROOT_MODULES = 6  # conftest.py, __init__.py and the tests of the whole house


def test_the_tests_mirror_the_package(house: ModuleType) -> None:
    """A room's tests are in tests/<room>/; the root keeps little else."""
    tests = ROOT / "tests"
    modules = sorted(path.name for path in tests.glob("*.py"))
    assert len(modules) <= ROOT_MODULES, modules
    folders = {path.name for path in tests.iterdir() if (path / "__init__.py").is_file()}
    assert folders - set(house.rooms()) <= BESIDE_THE_ROOMS, folders - set(house.rooms())
