"""One cause, one FAIL on the published matrix: a FAIL that follows from another FAIL of its
column (results.json's follows_from) has no triage line, is not among the column's MUST failed,
shows as FAIL (follows) in the table and is listed under its cause's line; a line on it is one
that ``matrix check`` reports."""

from __future__ import annotations

from pathlib import Path

from conformance.matrix import publish, triage
from tests.matrix.synthetic import DIGEST, judged, peer, write_matrix

HONOURED, DECODES, PARITY = "base64.honoured", "base64.decodes", "base64.float-parity"
FOLLOWING = {"alpha": {DECODES: [HONOURED], PARITY: [HONOURED, DECODES]}}
LINE = """
[[fail]]
peer = "alpha"
requirement = "{requirement}"
does = "Answers base64 requests with floats."
why = "Clients decode base64."
"""


def folder(tmp_path: Path, lines: tuple[str, ...] = (HONOURED,), cause: bool = False) -> Path:
    text = "".join(LINE.format(requirement=requirement) for requirement in lines)
    text += 'cause = "base64 ignored"\n' if cause else ""
    peers = [peer("alpha", judged())]
    return write_matrix(tmp_path / "m", peers, {"alpha": [HONOURED]}, text, FOLLOWING)


def problems(out: Path) -> list[str]:
    documents = publish.results_documents(
        out, publish.json.loads((out / "matrix.json").read_text())
    )
    lines = triage.load(out / triage.FILE)
    return triage.check(lines, triage.failures(documents), triage.following(documents)).problems()


def test_a_following_fail_needs_no_line_and_a_line_on_it_is_reported(tmp_path: Path) -> None:
    assert problems(folder(tmp_path / "one")) == []
    assert problems(folder(tmp_path / "three", (HONOURED, DECODES))) == [
        "triage line on a FAIL that follows from base64.honoured (the page lists it under "
        "them; it needs no line): alpha base64.decodes"
    ]


def test_its_cause_still_needs_a_line(tmp_path: Path) -> None:
    assert problems(folder(tmp_path, ())) == ["untriaged FAIL: alpha base64.honoured"]


def test_the_page_lists_it_under_its_cause_and_not_among_must_failed(tmp_path: Path) -> None:
    pages = publish.render_pages(folder(tmp_path), DIGEST)
    readme = pages["README.md"]
    row = next(line for line in readme.splitlines() if line.startswith("| [Server alpha]"))
    assert f"`{HONOURED}`" in row and DECODES not in row and PARITY not in row
    triaged = readme[readme.index("### Server alpha") :]
    assert (
        f"- `{HONOURED}` (MUST): Answers base64 requests with floats. Clients decode base64.\n"
        f"  - Following from it, not measurable without it: `{DECODES}` (MUST), "
        f"`{PARITY}` (MUST)\n"
    ) in triaged
    table = readme[readme.index("## Requirements by peer") : readme.index("## Triage")]
    assert f"| {DECODES} | MUST | FAIL (follows) |" in table
    assert f"| {HONOURED} | MUST | **FAIL** |" in table
    grouped = publish.render_pages(folder(tmp_path / "cause", cause=True), DIGEST)["README.md"]
    assert "**One root cause: base64 ignored** (3 FAILs, 3 of them MUST):" in grouped
    html = pages["index.html"]
    assert "Following from it, not measurable without it: <code>base64.decodes</code>" in html
    assert "FAIL (follows)</span>" in html
