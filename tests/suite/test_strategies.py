"""The fuzzer and the fixtures judge one behaviour at one level: every kind of broken body the
fuzzer sends is an instance of a bad request of fixtures/bad_requests.json, and it demands a 4xx
(under fuzz.robust, a MUST) only where that case demands one at MUST."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest
from hypothesis import Phase, find, given, seed, settings

from conformance.checks import errors, fuzz
from conformance.requirements import BY_ID, judged_by
from conformance.suite.strategies import (
    BAD_REQUESTS,
    BROKEN_KINDS,
    Labelled,
    broken_bodies,
    request_bodies,
    seeded_only,
)
from conformance.suite.test_fuzz import FUZZ_SEED

BASE = {"model": "$MODEL", "input": "hello"}
MODEL = "m"


def broken_fields(body: dict[str, Any]) -> set[str]:
    """The fields in which a fixture body differs from the valid {"model", "input": "hello"}."""
    return {key for key in {*BASE, *body} if body.get(key, ...) != BASE.get(key, ...)}


@pytest.mark.parametrize("kind", BROKEN_KINDS, ids=lambda kind: kind.case)
def test_each_broken_kind_is_an_instance_of_a_fixture_case(kind: Any) -> None:
    bad = BAD_REQUESTS[kind.case]
    assert isinstance(bad.body, dict) and broken_fields(bad.body) == {kind.field}


@pytest.mark.parametrize("kind", BROKEN_KINDS, ids=lambda kind: kind.case)
def test_a_4xx_is_demanded_only_of_kinds_the_fixtures_demand_it_of_at_must(kind: Any) -> None:
    bad = BAD_REQUESTS[kind.case]
    if kind.label == "invalid":
        assert bad.expect == "reject" and BY_ID[judged_by(errors.rejected)].level == "MUST"
    else:  # hygiene: judged by its SHOULD, and fuzz.robust asks only for no 5xx
        assert bad.expect != "reject"
        assert bad.requirement is None or BY_ID[bad.requirement].level == "SHOULD"
    assert BY_ID[judged_by(fuzz.robust)].level == "MUST"


def drawn(condition: Any) -> Labelled:
    """The first broken body the fuzzer draws that satisfies ``condition``."""
    return find(broken_bodies(MODEL), lambda labelled: condition(labelled[1]))


@pytest.mark.parametrize(
    ("condition", "label"),
    [
        (lambda body: body["input"] == [], "arguable"),  # input.empty-rejected: a SHOULD
        (lambda body: body.get("encoding_format") == "", "arguable"),
        (lambda body: isinstance(body.get("encoding_format"), str), "arguable"),
        (lambda body: isinstance(body.get("encoding_format"), int), "arguable"),
        (lambda body: body["input"] is None, "invalid"),  # errors.rejected: a MUST
        (lambda body: isinstance(body["model"], int), "arguable"),  # the one model, served
        (lambda body: isinstance(body["input"], dict), "arguable"),  # {"text": ...} read
        (lambda body: body["input"] == [None], "invalid"),
    ],
    ids=[
        "input []",
        "format ''",
        "format str",
        "format int",
        "input null",
        "model int",
        "input object",
        "input [null]",
    ],
)
def test_what_the_fuzzer_draws_is_labelled_at_the_fixtures_level(
    condition: Any, label: str
) -> None:
    assert drawn(condition)[0] == label


def test_every_kind_the_fixtures_call_hygiene_is_still_drawn() -> None:
    """Hygiene kinds are not dropped from the fuzzer: they are sent, and must not get a 5xx."""
    assert {kind.label for kind in BROKEN_KINDS} == {"invalid", "arguable"}
    hygiene = {kind.case for kind in BROKEN_KINDS if kind.label == "arguable"}
    assert hygiene == {
        "empty-array",
        "encoding-format-unknown",
        "encoding-format-empty",
        "encoding-format-number",
        "object-input",
        "model-not-string",
    }


def bodies_drawn(count: int = 300) -> list[str]:
    """What the fuzzer's seed draws first, as the fuzz test draws it (no shrinking here)."""
    drawn: list[str] = []

    @seed(FUZZ_SEED)
    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None)
    @given(request_bodies(MODEL))
    def draw(labelled: Labelled) -> None:
        drawn.append(repr(labelled))

    draw()
    return drawn


def test_the_fuzzer_draws_from_its_seed_alone(tmp_path: Any, monkeypatch: Any) -> None:
    """A local module full of constants changes what hypothesis draws, unless seeded_only."""
    with seeded_only():
        before = bodies_drawn()
    constants = [*range(10_000, 10_400), *(f"constant-{n}" for n in range(400))]
    (tmp_path / "many_constants.py").write_text(f"VALUES = {constants!r}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "many_constants", importlib.import_module("many_constants"))
    with seeded_only():
        assert bodies_drawn() == before
    assert bodies_drawn() != before  # the guard is what holds them: the private hook still works
