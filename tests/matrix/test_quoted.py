"""A triage line quotes its FAIL's measurement through placeholders the pages fill in from the
peer's results.json, so a rebuilt column can never leave a stale number in its words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.matrix import publish, triage
from tests.matrix.synthetic import DIGEST, judged, peer, write_matrix

REQUIREMENT = "batch.single-vs-batch"
LINE = """
[[fail]]
peer = "alpha"
requirement = "batch.single-vs-batch"
does = "{does}"
why = "Rows must be their inputs' own answers."
"""


def folder(tmp_path: Path, does: str, measured: object = 0.18234, failures: int = 3) -> Path:
    out = write_matrix(
        tmp_path / "m", [peer("alpha", judged())], {"alpha": [REQUIREMENT]}, LINE.format(does=does)
    )
    path = out / "alpha" / "results.json"
    document = json.loads(path.read_text())
    for entry in document["requirements"]:
        if entry["id"] == REQUIREMENT:
            entry.update(measured=measured, limit="<= 0.0001")
            entry["failures"] = [{"test": f"t{n}", "detail": "d"} for n in range(failures)]
    path.write_text(json.dumps(document))
    return out


def test_the_pages_quote_the_results(tmp_path: Path) -> None:
    does = "Rows differ by up to {{measured}} (limit {{limit}}) in {{failures}} checks."
    pages = publish.render_pages(folder(tmp_path, does), DIGEST)
    said = "Rows differ by up to 0.182 (limit &lt;= 0.0001) in 3 checks."
    assert said in pages["index.html"] and said in pages["README.md"]


def test_whole_numbers_are_quoted_with_commas(tmp_path: Path) -> None:
    pages = publish.render_pages(folder(tmp_path, "{{measured}} vectors.", 2049), DIGEST)
    assert "2,049 vectors." in pages["README.md"]


def unfilled(out: Path) -> list[tuple[str, str]]:
    documents = publish.results_documents(out, json.loads((out / "matrix.json").read_text()))
    return triage.unfilled(triage.load(out / triage.FILE), documents)


def test_a_value_the_results_lack_is_reported(tmp_path: Path) -> None:
    assert unfilled(folder(tmp_path / "a", "Up to {{measured}}.", measured=None)) == [
        ("alpha", REQUIREMENT)
    ]
    assert unfilled(folder(tmp_path / "b", "Up to {{measured}}.")) == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('does = "Up to {{worst}}."', "'does' quotes {{worst}}"),
        ('cause = "Rounding of {{measured}}"', "'cause' quotes {{measured}}"),
    ],
)
def test_only_measurements_in_a_lines_own_words(tmp_path: Path, extra: str, message: str) -> None:
    text = LINE.format(does="Rows differ.").replace('does = "Rows differ."', extra)
    if not extra.startswith("does"):
        text += 'does = "Rows differ."\n'
    (tmp_path / "triage.toml").write_text(text)
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("}", r"\}")):
        triage.load(tmp_path / "triage.toml")
