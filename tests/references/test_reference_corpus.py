"""The reference corpus and its script (scripts/make_reference_corpus.py): the packaged file holds
every rule, and the rules on control and invisible characters see what they are there for."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformance.references import reference_cases
from conformance.suite.reference_corpus import CASES, owed_notes
from tests.support.scripts import load_script


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("make_reference_corpus")


@pytest.fixture
def document(script: ModuleType) -> dict[str, Any]:
    return dict(json.loads(script.DEFAULT_PATH.read_text(encoding="utf-8")))


def test_the_packaged_corpus_holds_every_rule_and_is_up_to_date(script: ModuleType) -> None:
    """Token ids, lengths, categories, control cases, reads_as, stable ids, the file's form."""
    assert script.main(["--check"]) == 0


def test_the_packaged_corpus_is_the_scripts_file(script: ModuleType) -> None:
    packaged = {c.id: c.text for c in reference_cases()}
    on_disk = json.loads(script.DEFAULT_PATH.read_text(encoding="utf-8"))["cases"]
    assert packaged == {c["id"]: c["text"] for c in on_disk}


def test_the_control_cases_reach_the_suite_with_their_characters() -> None:
    assert CASES["ctl-nul-mid"].text.index("\0") > 10  # inside the sentence
    assert CASES["ctl-nul-start"].text.startswith("\0")
    assert CASES["ctl-bom-start"].text.startswith("\ufeff")
    assert CASES["ctl-cr-lone"].reads_as is None  # CR is whitespace to the tokenizer
    nul = CASES["ctl-nul-mid"]
    assert nul.reads_as == nul.text.replace("\0", "") and nul.dropped() == ["U+0000"]
    assert CASES["ctl-zwsp"].dropped() == ["U+200B"] and CASES["ctl-shy"].dropped() == ["U+00AD"]


def test_unprintable_characters_are_written_as_escapes(script: ModuleType) -> None:
    document = {"t": "a\u200bb\u0000c\ufeffd\u00a0e\U000e0067\u00e9\U0001f600"}
    rendered = script.render(document)
    for escape in ("\\u200b", "\\u0000", "\\ufeff", "\\u00a0", "\\udb40\\udc67"):
        assert escape in rendered
    assert "é" in rendered and "\U0001f600" in rendered  # printable: as they read
    assert json.loads(rendered) == document
    assert script.check_round_trip(document, rendered) == []
    raw = json.dumps(document, ensure_ascii=False)
    assert script.check_round_trip(document, raw) == [
        "unprintable characters written raw: U+00A0, U+200B, U+E0067, U+FEFF"
    ]


def test_a_text_the_reference_alters_must_say_what_it_reads(script: ModuleType) -> None:
    def case(text: str, **extra: str) -> dict[str, Any]:
        return {"id": "x-1", "text": text, "tags": ["control"], **extra}

    assert script.check_reads_as(case("a\0b", reads_as="ab")) == []
    assert script.check_reads_as(case("plain")) == []
    assert script.check_reads_as(case("tab\tand\r\nCRLF")) == []  # kept, as whitespace
    assert "reads_as must be 'ab'" in script.check_reads_as(case("a\0b"))[0]
    assert "reads_as must be 'ab'" in script.check_reads_as(case("a\0b", reads_as="a"))[0]
    assert "nothing in it is dropped" in script.check_reads_as(case("ab", reads_as="ab"))[0]


def test_reads_as_is_checked_against_the_tokenizer(script: ModuleType) -> None:
    cases = [{"id": "x-1", "text": "a\0b", "reads_as": "ab", "tags": []}]
    assert script.check_same_reading(cases, lambda text: [len(text)]) == [
        "x-1: the tokenizer reads the text otherwise than reads_as"
    ]
    assert script.check_same_reading(cases, lambda text: [len(text.replace("\0", ""))]) == []


def test_a_control_case_that_lost_its_character_or_its_id_is_named(
    script: ModuleType, document: dict[str, Any]
) -> None:
    cases = copy.deepcopy(document["cases"])
    assert script.check_control_cases(cases) == []
    by_id = {case["id"]: case for case in cases}
    by_id["ctl-nul-mid"]["text"] = by_id["ctl-nul-mid"]["text"].replace("\0", "")
    by_id["ctl-bom-start"]["id"] = "ctl-bom-first"
    assert script.check_control_cases(cases) == [
        "ctl-nul-mid: its text must hold '\\x00'",
        f"ctl-bom-start: missing (control cases: {', '.join(script.CONTROL_CASES)})",
        "ctl-bom-first: a control case not in CONTROL_CASES",
    ]


def test_an_id_a_golden_was_recorded_for_cannot_go(
    script: ModuleType, document: dict[str, Any], tmp_path: Path
) -> None:
    cases = document["cases"]
    assert script.check_stable_ids(cases) == []  # the bundled goldens
    golden = tmp_path / "some-model" / "vllm"
    golden.mkdir(parents=True)
    manifest = {"case_ids": ["en-sent-01"], "rejected": {"ctx-past-9999": "HTTP 400"}}
    (golden / "manifest.json").write_text(json.dumps(manifest))
    assert script.check_stable_ids(cases, tmp_path) == [
        "ids recorded in golden some-model/vllm are gone (renamed?): ['ctx-past-9999']"
    ]


def test_a_disagreement_on_an_altered_text_says_what_is_owed() -> None:
    cases = [CASES["en-sent-01"], CASES["ctl-nul-mid"], CASES["ctl-zwsp"]]
    assert owed_notes(cases, [0.5, 1e-7, 0.2], 1e-3) == [
        "ctl-zwsp disagrees: the reference deletes U+200B from it and embeds 'Read the report "
        "at example.com/reports/2024/annual before Friday.'; that text's vector is owed (a "
        "server that cuts or rewrites the text at such a character answers for another text)"
    ]
    assert len(owed_notes(cases, [0.0, float("nan"), 0.0], 1e-3)) == 1  # a null vector too
