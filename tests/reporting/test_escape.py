"""The one escaper per output format, against text a hostile server could send."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

import pytest

from conformance.reporting.escape import (
    html_text,
    markdown_link,
    markdown_text,
    terminal_text,
    xml_safe,
)

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "a | b | c",
    "`code` and ```fence```",
    "line one\nline two\r\n\tthree",
    "[click](javascript:alert(1))",
    "![img](https://evil.example/x.png)",
    "<https://evil.example>",
    "**bold** _em_ ~~strike~~ # heading",
    "&lt;already an entity&gt; &amp;",
    "\x1b[31mred\x1b[0m \x00 \x07 \x7f",
    "lone surrogate \ud800 and \ufffe",
    '" onmouseover="alert(1)',
]


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_leaves_no_markup_and_reads_back_as_the_text(text: str) -> None:
    escaped = html_text(text)
    assert not re.search(r"[<>\"']", escaped)  # no tag, no way out of a quoted attribute
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe]", escaped)
    assert html.unescape(escaped) == xml_safe(text)  # only what HTML cannot carry is changed


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_is_a_valid_xml_attribute_and_text(text: str) -> None:
    element = ET.fromstring(f'<p title="{html_text(text)}">{html_text(text)}</p>')
    # (an XML parser normalizes line ends, and whitespace in attributes: that is XML's doing)
    assert element.text == xml_safe(text).replace("\r\n", "\n")
    assert element.get("title") == " ".join(
        xml_safe(text).replace("\r\n", "\n").split("\n")
    ).replace("\t", " ")


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_text_is_one_line_without_markup_html_or_columns(text: str) -> None:
    escaped = markdown_text(text)
    assert "\n" not in escaped and "\r" not in escaped
    assert "<" not in escaped and ">" not in escaped  # no HTML, no autolink
    assert not re.search(r"(?<!\\)[|`*_\[\]!#~]", escaped)  # each markup character escaped
    assert not re.search("[\x00-\x1f\x7f\ud800-\udfff]", escaped)


def test_markdown_text_cannot_make_a_link() -> None:
    escaped = markdown_text("[click](javascript:alert(1))")
    assert escaped == "\\[click\\](javascript:alert(1))"


def test_markdown_text_keeps_a_table_row_to_its_columns() -> None:
    row = "| " + " | ".join(markdown_text(cell) for cell in ("a | b", "c|d", "e")) + " |"
    assert len(re.split(r"(?<!\\)\|", row)) == 5  # three cells between four pipes


def test_markdown_text_clips_before_escaping() -> None:
    assert markdown_text("x" * 10, limit=5) == "xxxx…"
    assert markdown_text("<" * 10, limit=3) == "&lt;&lt;…"


def test_terminal_text_shows_control_characters_escaped() -> None:
    assert terminal_text("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert terminal_text("tab\there\nnew") == "tab\\there\\nnew"
    assert terminal_text("plain é ü 名前") == "plain é ü 名前"


def test_xml_safe_escapes_only_what_xml_cannot_carry() -> None:
    assert xml_safe("ok\ttab\nnl <tag> é") == "ok\ttab\nnl <tag> é"
    assert xml_safe("\x00\x1b\ud800\ufffe") == "\\x00\\x1b\\ud800\\ufffe"


def test_markdown_link_keeps_its_text_and_its_destination_apart() -> None:
    link = markdown_link("issue [1](x)", "https://e.org/a b) [x](javascript:alert(1)")
    text, _, target = link.removeprefix("[").removesuffix(")").rpartition("](")
    assert text == "issue \\[1\\](x)"
    assert target == "https://e.org/a%20b%29%20[x]%28javascript:alert%281%29"
    assert not re.search(r"[\s()<>]", target)  # nothing can end the destination early


def test_markdown_link_leaves_an_ordinary_url_as_it_is() -> None:
    url = "https://github.com/vllm-project/vllm/issues/123?q=a+b&x=%20#issuecomment-9"
    assert markdown_link("issue", url) == f"[issue]({url})"
