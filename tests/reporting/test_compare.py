"""``compare``: the table of runs (requirement x run), the diff of two, renderers, the command."""

from __future__ import annotations

import argparse
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.reporting.compare import (
    MISSING,
    Run,
    allowed_movement,
    change_kind,
    comparison_rows,
    diff,
    load_runs,
)
from conformance.reporting.compare_cli import add_compare_arguments, run_compare
from conformance.reporting.compare_html import render_diff_html, render_html
from conformance.reporting.compare_markdown import render_diff_markdown, render_markdown
from conformance.reporting.compare_terminal import render_diff_terminal, render_terminal

SCHEMA = json.loads(
    (resources.files("conformance.reporting") / "results.schema.json").read_text("utf-8")
)
DIGEST = "0" * 64
HOSTILE = "<script>alert(1)</script>|\x1b[31m"


def requirement(
    requirement_id: str,
    status: str = "PASS",
    *,
    level: str = "MUST",
    measured: float | int | str | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    margin = None
    if isinstance(measured, float) and limit is not None and limit.startswith("<= "):
        margin = float(limit[3:]) - measured
    return {
        "id": requirement_id,
        "area": requirement_id.partition(".")[0],
        "level": level,
        "status": status,
        "why": "because",
        "guards": "a bug",
        "tests": 1,
        "duration_s": 0.01,
        "measured": measured,
        "limit": limit,
        "margin": margin,
        "worst_cases": [],
        "failures": [],
        "notes": [],
        "reason": "no reference" if status == "SKIPPED" else "",
    }


def document(
    requirements: list[dict[str, Any]],
    *,
    server_header: str | None = "vllm",
    version: str | None = "0.32.0",
    models: tuple[str, ...] = ("minilm",),
    model: str | None = "minilm",
    precision: str = "fp32",
) -> dict[str, Any]:
    """A results document, format 1, valid against the shipped schema."""
    failed = any(r["status"] == "FAIL" and r["level"] == "MUST" for r in requirements)
    counts = dict.fromkeys(
        (
            "passed",
            "failed",
            "warnings",
            "unsupported",
            "not_applicable",
            "not_run",
            "xfail",
            "stale",
        ),
        0,
    )
    built = {
        "format": 1,
        "suite": {"name": "embedding-conformance", "version": "1.0", "catalogue_sha256": DIGEST},
        "run": {
            "started": "2025-01-01T00:00:00Z",
            "finished": "2025-01-01T00:01:00Z",
            "duration_s": 60.0,
            "profile": "core",
            "precision": precision,
            "tolerances": {"vector_atol": 1e-5, "norm_atol": 1e-3},
            "selection": {"requirements": None, "keyword": None, "markers": None, "deselected": 0},
            "certify": False,
            "known_failures": None,
            "capabilities": None,
        },
        "endpoint": {"url": "http://localhost:8000/v1/embeddings", "model": model, "options": {}},
        "server": {"models": list(models), "server_header": server_header, "version": version},
        "reference": {"kind": "golden", "spec": "golden:minilm", "name": "minilm"},
        "verdict": "FAIL" if failed else "PASS",
        "counts": counts,
        "requirements": requirements,
        "series": {"norms": [], "agreement": [], "latency": []},
    }
    jsonschema.Draft202012Validator(SCHEMA).validate(built)
    return built


def write(folder: Path, name: str, built: dict[str, Any]) -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps(built), encoding="utf-8")
    return path


def runs_of(folder: Path, *documents: dict[str, Any]) -> list[Run]:
    return load_runs([write(folder, f"run{n}", d) for n, d in enumerate(documents, 1)])


# Loading and labels


def test_labels_name_server_version_and_model_and_stay_unique(tmp_path: Path) -> None:
    reqs = [requirement("envelope.a")]
    runs = load_runs(
        [
            write(tmp_path, "before", document(reqs)),
            write(tmp_path, "after", document(reqs)),
            write(tmp_path, "tei", document(reqs, server_header=None, models=("bge", "x"))),
            write(tmp_path, "bare", document(reqs, server_header=None, version=None, models=())),
            write(tmp_path, "nomodel", document(reqs, server_header=None, models=(), model=None)),
        ]
    )
    assert [run.label for run in runs] == [
        "vllm 0.32.0 (minilm) [before]",
        "vllm 0.32.0 (minilm) [after]",
        "bge 0.32.0 (minilm)",
        "minilm",
        "0.32.0",
    ]


def test_label_falls_back_to_the_file_name(tmp_path: Path) -> None:
    built = document([], server_header=None, version=None, models=(), model=None)
    assert load_runs([write(tmp_path, "mystery", built)])[0].label == "mystery.json"


def test_labels_of_the_same_file_stem_still_differ(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    built = document([requirement("envelope.a")])
    runs = load_runs(
        [write(tmp_path / "x", "results", built), write(tmp_path / "y", "results", built)]
    )
    assert runs[0].label != runs[1].label


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        (json.dumps({"endpoint": "x", "requirements": []}), "format 1"),
        (json.dumps({"format": 1, "requirements": {}}), '"requirements" list'),
        (json.dumps({"format": 1, "requirements": [{"id": "a"}]}), "requirements[0]"),
        (json.dumps([1, 2]), "not a JSON object"),
    ],
)
def test_unusable_files_are_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "broken.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"broken\.json: .*{re.escape(message)}"):
        load_runs([path])


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"absent\.json: cannot read"):
        load_runs([tmp_path / "absent.json"])


# The table of runs


def test_table_cells_for_four_runs(tmp_path: Path) -> None:
    runs = runs_of(
        tmp_path,
        document(
            [requirement("a.one"), requirement("a.two", "FAIL"), requirement("c.x", "SKIPPED")]
        ),
        document([requirement("a.one", "FAIL"), requirement("a.two", level="MUST")]),
        document(
            [
                requirement("a.one"),
                requirement("b.new", "UNSUPPORTED", level="SHOULD"),
                requirement("a.two", "NOT RUN"),
            ]
        ),
        document(
            [
                requirement("a.one", "XFAIL"),
                requirement("a.two", "STALE"),
                requirement("c.x"),
                requirement("b.new", level="SHOULD"),
            ]
        ),
    )
    rows = comparison_rows(runs)
    # b.new, which only later runs have, follows a.one as it does there
    assert [(r.id, r.level) for r in rows] == [
        ("a.one", "MUST"),
        ("b.new", "SHOULD"),
        ("a.two", "MUST"),
        ("c.x", "MUST"),
    ]
    assert [r.cells for r in rows] == [
        ("PASS", "FAIL", "PASS", "XFAIL"),
        (MISSING, MISSING, "UNSUPPORTED", "PASS"),
        ("FAIL", "PASS", "NOT RUN", "STALE"),
        ("N/A", MISSING, MISSING, "PASS"),
    ]


# The diff


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        ("PASS", "FAIL", "regression"),
        ("PASS", "UNSUPPORTED", "regression"),
        ("PASS", "SKIPPED", "regression"),
        ("UNSUPPORTED", "FAIL", "regression"),
        ("XFAIL", "FAIL", "regression"),
        ("SKIPPED", "FAIL", "regression"),
        ("FAIL", "PASS", "improvement"),
        ("FAIL", "UNSUPPORTED", "improvement"),
        ("XFAIL", "STALE", "improvement"),
        ("SKIPPED", "PASS", "improvement"),
        ("PASS", "NOT RUN", "changed"),
        ("FAIL", "SKIPPED", "changed"),
        ("PASS", "STALE", "changed"),
    ],
)
def test_change_kind(before: str, after: str, kind: str) -> None:
    assert change_kind(before, after) == kind


def test_diff_reports_status_changes_and_one_sided_requirements(tmp_path: Path) -> None:
    a, b = runs_of(
        tmp_path,
        document(
            [
                requirement("x.regressed"),
                requirement("x.improved", "FAIL", level="SHOULD"),
                requirement("x.same"),
                requirement("x.dropped"),
            ]
        ),
        document(
            [
                requirement("x.regressed", "FAIL"),
                requirement("x.improved", level="SHOULD"),
                requirement("x.same"),
                requirement("x.added"),
            ]
        ),
    )
    result = diff(a, b)
    assert [(c.id, c.before, c.after, c.kind) for c in result.changes] == [
        ("x.regressed", "PASS", "FAIL", "regression"),
        ("x.improved", "FAIL", "PASS", "improvement"),
    ]
    assert result.only_in_a == ("x.dropped",)
    assert result.only_in_b == ("x.added",)
    assert result.regressions == ("x.regressed",)
    assert result.moves == ()


def test_regressions_come_first_then_the_catalogue_order(tmp_path: Path) -> None:
    """A CI summary shows what blocks the merge before what improved."""
    names = ["x.improved", "x.regressed", "x.also-improved", "x.also-regressed"]
    before = ["FAIL", "PASS", "FAIL", "PASS"]
    after = ["PASS", "FAIL", "PASS", "UNSUPPORTED"]
    a, b = runs_of(
        tmp_path,
        document([requirement(n, s) for n, s in zip(names, before, strict=True)]),
        document([requirement(n, s) for n, s in zip(names, after, strict=True)]),
    )
    assert [c.id for c in diff(a, b).changes] == [
        "x.regressed",
        "x.also-regressed",
        "x.improved",
        "x.also-improved",
    ]


def test_a_measurement_moved_past_its_limit_is_reported_and_one_within_it_is_not(
    tmp_path: Path,
) -> None:
    limit = "<= 1e-05"
    a, b = runs_of(
        tmp_path,
        document(
            [
                requirement("ref.drifted", measured=1e-6, limit=limit),
                requirement("ref.jitter", measured=1e-6, limit=limit),
                requirement("ref.fixed", measured=3e-5, limit=limit),
                requirement("count.offenders", measured=0, limit="== 0"),
                requirement("http.status", measured="HTTP 200", limit="4xx"),
            ]
        ),
        document(
            [
                requirement("ref.drifted", measured=2.5e-5, limit=limit),
                requirement("ref.jitter", measured=8e-6, limit=limit),
                requirement("ref.fixed", measured=1e-7, limit=limit),
                requirement("count.offenders", measured=3, limit="== 0"),
                requirement("http.status", measured="HTTP 500", limit="4xx"),
            ]
        ),
    )
    result = diff(a, b)
    assert [(m.id, m.before, m.after, m.allowed, m.worse) for m in result.moves] == [
        ("ref.drifted", 1e-6, 2.5e-5, 1e-5, True),
        ("ref.fixed", 3e-5, 1e-7, 1e-5, False),
    ]
    assert result.regressions == ("ref.drifted",)  # a move for the better gates nothing


@pytest.mark.parametrize(
    ("limit", "allowed"),
    [("<= 1e-05", 1e-5), ("<=0.95", 0.95), ("== 0", None), ("<= nan", None), (None, None)],
)
def test_allowed_movement_comes_from_at_most_limits_only(
    limit: str | None, allowed: float | None
) -> None:
    assert allowed_movement(limit) == allowed


def test_diff_notes_a_different_tier(tmp_path: Path) -> None:
    a, b = runs_of(tmp_path, document([]), document([], precision="fp16"))
    assert any("fp32 vs fp16" in note for note in diff(a, b).notes)


# Renderers


def hostile_runs(folder: Path) -> list[Run]:
    hostile_reqs = [requirement(f"evil.{HOSTILE}", "FAIL"), requirement("x.ok")]
    return runs_of(
        folder,
        document([requirement("x.ok")]),
        document(hostile_reqs, server_header=HOSTILE, model=HOSTILE),
    )


def test_html_escapes_document_text_and_loads_nothing(tmp_path: Path) -> None:
    runs = hostile_runs(tmp_path)
    for page in (render_html(runs, comparison_rows(runs)), render_diff_html(diff(*runs))):
        assert "<script" not in page and "&lt;script&gt;" in page
        assert "http://" not in page and "https://" not in page and "src=" not in page
        assert page.startswith("<!DOCTYPE html>") and "<style>" in page


def test_markdown_escapes_document_text_and_keeps_the_columns(tmp_path: Path) -> None:
    runs = hostile_runs(tmp_path)
    text = render_markdown(runs, comparison_rows(runs))
    assert "<script" not in text and "\x1b" not in text
    table = [line for line in text.splitlines() if line.startswith("| ")]
    # Cells split on unescaped pipes only: a hostile "|" must not add a column
    columns = {len(re.split(r"(?<!\\)\|", line)) for line in table}
    assert columns == {len(runs) + 4}
    assert "<script" not in render_diff_markdown(diff(*runs))


def test_a_foreign_level_and_status_are_escaped_in_every_format(tmp_path: Path) -> None:
    """compare reads any version's documents: their levels and statuses are text like the rest."""
    foreign = {"id": "x.ok", "level": HOSTILE, "status": HOSTILE}
    a = Run(tmp_path / "a.json", {"requirements": [requirement("x.ok")]}, "a")
    b = Run(tmp_path / "b.json", {"requirements": [foreign]}, "b")
    runs, rows = [a, b], comparison_rows([a, b])
    for text in (render_terminal(runs, rows), render_diff_terminal(diff(a, b))):
        assert "\x1b" not in text and "\\x1b" in text
    for text in (render_markdown(runs, rows), render_diff_markdown(diff(a, b))):
        assert "<script" not in text and "\x1b" not in text
        table = [line for line in text.splitlines() if line.startswith("| ")]
        assert len({len(re.split(r"(?<!\\)\|", line)) for line in table}) == 1
    for page in (render_html(runs, rows), render_diff_html(diff(a, b))):
        assert "<script" not in page and "&lt;script&gt;" in page


def test_terminal_shows_control_characters_escaped(tmp_path: Path) -> None:
    runs = hostile_runs(tmp_path)
    for text in (render_terminal(runs, comparison_rows(runs)), render_diff_terminal(diff(*runs))):
        assert "\x1b" not in text and "\\x1b" in text


def test_terminal_aligns_columns_under_the_labels(tmp_path: Path) -> None:
    runs = runs_of(
        tmp_path,
        document([requirement("a.one"), requirement("a.two", "SKIPPED")]),
        document([requirement("a.one", "FAIL")], server_header="tei"),
    )
    lines = render_terminal(runs, comparison_rows(runs)).splitlines()
    header = lines[0]
    column = header.index("tei 0.32.0 (minilm)")
    assert header.startswith("requirement")
    row = next(line for line in lines if line.startswith("a.two"))
    assert row[column:] == MISSING
    assert row[header.index("vllm") :].startswith("N/A")


def test_terminal_numbers_the_runs_when_labels_are_too_wide(tmp_path: Path) -> None:
    long = "a-very-long-server-name-that-goes-on"
    runs = runs_of(tmp_path, *(document([], server_header=f"{long}-{n}") for n in range(3)))
    text = render_terminal(runs, comparison_rows(runs), width=80)
    assert text.splitlines()[0].startswith(f"[1]  {long}-0")
    header = next(line for line in text.splitlines() if line.startswith("requirement"))
    assert header.split() == ["requirement", "level", "[1]", "[2]", "[3]"]
    assert all(len(line) <= 80 for line in text.splitlines()[4:])


# The command


def compare_command(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="compare")
    add_compare_arguments(parser)
    return run_compare(parser.parse_args(argv))


@pytest.fixture
def before_after(tmp_path: Path) -> tuple[str, str, str]:
    """Paths of a clean run, a run that regressed, and a copy of the clean one."""
    clean = document([requirement("x.one"), requirement("x.two", measured=1e-6, limit="<= 1e-05")])
    worse = document([requirement("x.one", "FAIL"), requirement("x.two")])
    return (
        str(write(tmp_path, "clean", clean)),
        str(write(tmp_path, "worse", worse)),
        str(write(tmp_path, "again", clean)),
    )


def test_the_table_of_runs_exits_0(
    before_after: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert compare_command(*before_after) == 0
    out = capsys.readouterr().out
    assert "x.one" in out and "FAIL" in out


def test_diff_exits_1_on_a_regression_and_0_without(
    before_after: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    clean, worse, again = before_after
    assert compare_command("--diff", clean, worse) == 1
    assert "PASS -> FAIL" in capsys.readouterr().out
    assert compare_command("--diff", clean, again) == 0
    assert compare_command("--diff", worse, clean, "--format", "markdown") == 0


def test_diff_of_three_runs_is_a_usage_error(
    before_after: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert compare_command("--diff", *before_after) == 4
    assert "exactly two" in capsys.readouterr().err


def test_an_unreadable_file_is_a_usage_error(
    before_after: tuple[str, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    assert compare_command(before_after[0], str(broken)) == 4
    captured = capsys.readouterr()
    assert "broken.json" in captured.err and captured.out == ""


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html"])
def test_out_writes_the_report_to_the_file(
    before_after: tuple[str, str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
) -> None:
    out = tmp_path / "reports" / "compare.txt"
    out.parent.mkdir()
    assert compare_command("--diff", *before_after[:2], "--format", fmt, "--out", str(out)) == 1
    assert capsys.readouterr().out == ""
    assert "x.one" in out.read_text(encoding="utf-8")
    assert [p.name for p in out.parent.iterdir()] == ["compare.txt"]  # no temporary left


def test_out_into_a_missing_folder_is_a_usage_error(
    before_after: tuple[str, str, str], tmp_path: Path
) -> None:
    assert compare_command(*before_after, "--out", str(tmp_path / "no" / "page.html")) == 4
