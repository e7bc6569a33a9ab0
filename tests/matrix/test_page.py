"""The matrix page shows what the triage and the manifest say beyond the verdicts: judgement
calls and the matrix's own settings flagged with their text, FAILs of one root cause as one
defect under it, what each column was judged with and whether that is stale; all of it escaped
for its medium by the one escaper."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.matrix import publish, triage
from tests.matrix.synthetic import DIGEST, judged, peer, write_matrix

BASE64 = ("base64.honoured", "base64.decodes", "base64.float-parity")
TRIAGE = """
[[fail]]
peer = "alpha"
requirement = "base64.honoured"
does = "Answers base64 requests with floats."
why = "Clients decode base64."
cause = "`encoding_format=base64` ignored"

[[fail]]
peer = "alpha"
requirement = "base64.decodes"
does = "Its answer is no base64."
why = "Clients fail to decode."
cause = "`encoding_format=base64` ignored"

[[fail]]
peer = "alpha"
requirement = "base64.float-parity"
does = "No base64 vectors to compare."
why = "Clients get floats."
cause = "`encoding_format=base64` ignored"

[[fail]]
peer = "alpha"
requirement = "errors.content-type"
does = "Accepts text/plain."
why = "Hygiene."
setting = "run with LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY"

[[fail]]
peer = "beta"
requirement = "dimensions.invalid-rejected"
does = "Reads dimensions 0 as unset."
why = "A parameter silently ignored."
judgement = "0 is rare from a client"
"""


def pages(tmp_path: Path, catalogue: str = DIGEST, **judged_with: object) -> dict[str, str]:
    peers = [
        peer("alpha", judged_with.get("alpha", judged())),  # type: ignore[arg-type]
        peer("beta"),  # recorded nothing: an older build
    ]
    failing = {"alpha": [*BASE64, "errors.content-type"], "beta": ["dimensions.invalid-rejected"]}
    folder = write_matrix(tmp_path / "matrix", peers, failing, TRIAGE)
    return publish.render_pages(folder, catalogue)


def section(text: str, start: str, end: str) -> str:
    first = text.index(start)
    return text[first : text.index(end, first + len(start))]


# Root causes


def test_fails_of_one_cause_are_one_group_in_markdown(tmp_path: Path) -> None:
    readme = pages(tmp_path)["README.md"]
    alpha = section(readme, "### Server alpha", "### Server beta")
    head = "- **One root cause: `encoding_format=base64` ignored** (3 FAILs, 3 of them MUST):"
    assert head in alpha
    members = alpha.split(head)[1].splitlines()[1:4]
    assert [re.match(r"  - `([^`]+)`", line).group(1) for line in members] == list(BASE64)  # type: ignore[union-attr]
    assert alpha.count("One root cause") == 1
    assert "\n- `errors.content-type` (SHOULD):" in alpha  # no cause: a defect of its own


def test_fails_of_one_cause_are_one_group_in_html(tmp_path: Path) -> None:
    page = pages(tmp_path)["index.html"]
    alpha = section(page, "<h3>Server alpha 1.2.3</h3>", "<h3>")
    group = re.search(r'<li class="cause">(.*?)</ul></li>', alpha, re.DOTALL)
    assert group is not None
    assert "One root cause: <code>encoding_format=base64</code> ignored" in group.group(1)
    assert re.findall(r"<li><code>([^<]+)</code>", group.group(1)) == list(BASE64)
    assert alpha.count('class="cause"') == 1


def test_grouping_keeps_catalogue_order_and_other_peers_apart() -> None:
    def line(requirement: str, cause: str = "") -> triage.Line:
        return triage.Line("p", requirement, "does", "why", cause=cause)

    fails = [
        ("a", "MUST", line("a", "x")),
        ("b", "MUST", line("b")),
        ("c", "SHOULD", line("c", "x")),
        ("d", "MUST", None),
    ]
    groups = publish.grouped(fails)
    assert [(cause, [f[0] for f in members]) for cause, members in groups] == [
        ("x", ["a", "c"]),
        ("", ["b"]),
        ("", ["d"]),
    ]


# Flags


def test_judgement_calls_and_settings_are_flagged_with_their_text(tmp_path: Path) -> None:
    rendered = pages(tmp_path)
    readme, page = rendered["README.md"], rendered["index.html"]
    assert (
        "**MATRIX SETTING:** run with LITELLM\\_DANGEROUSLY\\_PERMIT\\_WEAK"
        "\\_OR\\_UNSET\\_MASTER\\_KEY" in readme
    )
    assert "**JUDGEMENT CALL:** 0 is rare from a client" in readme
    assert (
        '<span class="flag setting">matrix setting</span> run with '
        "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY" in page
    )
    assert '<span class="flag judgement">judgement call</span> 0 is rare from a client' in page


# What each column was judged with


def test_judged_with_shows_short_digests_or_not_recorded(tmp_path: Path) -> None:
    rendered = pages(tmp_path)
    shown = "suite 9.9.9, catalogue abababab, corpus cdcdcdcd, golden efefefef"
    for page in rendered.values():
        assert shown in page and "not recorded" in page
        assert "ab" * 9 not in page.replace(DIGEST[:16], "")  # digests shown short
        assert publish.STALE not in page


def test_a_column_judged_with_another_catalogue_is_stale(tmp_path: Path) -> None:
    rendered = pages(tmp_path, catalogue="12" * 32)
    readme, page = rendered["README.md"], rendered["index.html"]
    assert "| **STALE**: suite 9.9.9, catalogue abababab" in readme
    assert "**STALE: 1 column (alpha) judged with another requirement catalogue" in readme
    assert "Server alpha 1.2.3 (STALE)" in readme  # its column head
    assert "Server beta 1.2.3 (STALE)" not in readme  # unrecorded: not known, not claimed
    assert '<span class="flag stale">STALE</span> suite 9.9.9' in page
    assert "<span>1. Server alpha 1.2.3 (STALE)</span>" in page


def test_rendering_is_pure_over_its_inputs(tmp_path: Path) -> None:
    assert pages(tmp_path / "a") == pages(tmp_path / "b")


# Escaping and validation

HOSTILE = "<script>x</script> | *bold* [link](http://e) `<b>`"


def test_cause_and_setting_are_escaped(tmp_path: Path) -> None:
    text = TRIAGE.replace("`encoding_format=base64` ignored", HOSTILE.replace('"', "'"))
    text = text.replace("run with LITELLM", HOSTILE + " LITELLM")
    folder = write_matrix(
        tmp_path / "m", [peer("alpha"), peer("beta")], {"alpha": [*BASE64, "errors.content-type"]}
    )
    (folder / "triage.toml").write_text(text.split('[[fail]]\npeer = "beta"')[0])
    rendered = publish.render_pages(folder, DIGEST)
    for page in rendered.values():
        assert "<script>" not in page and "&lt;script&gt;" in page
        assert 'href="http://e"' not in page
    assert "\\| \\*bold\\* \\[link\\](http://e)" in rendered["README.md"]  # no link
    assert "`<b>`" in rendered["README.md"]  # a code span stays one: GitHub shows it literally
    assert "<code>&lt;b&gt;</code>" in rendered["index.html"]


def test_links_cannot_be_broken_out_of(tmp_path: Path) -> None:
    """A homepage or triage link with a parenthesis or a space ends nowhere but at its end."""
    hostile = "https://e.org/x) [y](javascript:alert(1)"
    text = TRIAGE.replace('why = "Hygiene."', f'why = "Hygiene."\nlink = "{hostile}"')
    folder = write_matrix(
        tmp_path / "m",
        [peer("alpha", homepage=hostile), peer("beta")],
        {"alpha": [*BASE64, "errors.content-type"]},
    )
    (folder / "triage.toml").write_text(text.split('[[fail]]\npeer = "beta"')[0])
    rendered = publish.render_pages(folder, DIGEST)
    encoded = "https://e.org/x%29%20[y]%28javascript:alert%281%29"
    assert f"| [Server alpha]({encoded}) |" in rendered["README.md"]
    assert f"([issue]({encoded}))" in rendered["README.md"]
    assert "](javascript" not in rendered["README.md"]
    assert 'href="javascript' not in rendered["index.html"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cause", '""', "'cause' given but empty"),
        ("setting", '"  "', "'setting' given but empty"),
        ("judgement", '""', "'judgement' given but empty"),
        ("cause", "3", "'cause' must be a string, not int"),
        ("setting", "[1]", "'setting' must be a string, not list"),
        ("why", '" "', "'why' owed"),
    ],
)
def test_triage_fields_are_checked(tmp_path: Path, field: str, value: str, message: str) -> None:
    path = tmp_path / "triage.toml"
    entry = {"peer": '"p"', "requirement": '"r"', "does": '"d"', "why": '"w"', field: value}
    path.write_text("[[fail]]\n" + "".join(f"{k} = {v}\n" for k, v in entry.items()))
    with pytest.raises(ValueError, match=re.escape(message)):
        triage.load(path)


def test_cause_and_setting_load(tmp_path: Path) -> None:
    path = tmp_path / "triage.toml"
    path.write_text(
        '[[fail]]\npeer = ["p", "q"]\nrequirement = "r"\ndoes = "d"\nwhy = "w"\n'
        'cause = "one cause"\nsetting = "n_batch 256"\n'
    )
    lines = triage.load(path)
    assert [(line.peer, line.cause, line.setting) for line in lines] == [
        ("p", "one cause", "n_batch 256"),
        ("q", "one cause", "n_batch 256"),
    ]
