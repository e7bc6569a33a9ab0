"""One escaper per output format. Every string of a results document may be a server's (a
model name, an error detail, a response body) and is hostile until escaped for its medium."""

from __future__ import annotations

import html
import re
from urllib.parse import quote

# XML 1.0 cannot carry control characters or lone surrogates, escaped or not: one hostile byte
# in a server's answer must not make the whole file unreadable.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

# What a URL keeps as it is in a Markdown link's destination: its reserved characters and "%"
# (already-encoded bytes stay as they are), never parentheses, which would end the link.
_URL_SAFE = ":/?#[]@!$&'*+,;=%~"

# Markdown punctuation that could turn text into emphasis, code, links, headings or table
# columns; backslash-escaped, each renders as itself. (<, > and & become entities.)
_MARKDOWN = re.compile(r"([\\`*_{}\[\]#+!|~])")

# A `code span` of text this project writes (a triage line): kept as code, the rest escaped.
_CODE_SPAN = re.compile(r"(`[^`]+`)")


def _escaped(char: str) -> str:
    return char.encode("unicode_escape").decode("ascii")


def xml_safe(text: str) -> str:
    """``text`` with every character XML cannot represent written as its escape (``\\x1b``)."""
    return _NOT_XML.sub(lambda match: _escaped(match.group()), text)


def terminal_text(value: object) -> str:
    """Text safe for a terminal: control characters (escape sequences) shown escaped."""
    return "".join(char if char.isprintable() else _escaped(char) for char in str(value))


def html_text(value: object) -> str:
    """``value`` as HTML text or a quoted attribute value: markup characters as entities,
    characters HTML cannot carry as their escapes."""
    return html.escape(xml_safe(str(value)), quote=True)


def markdown_text(value: object, limit: int | None = None) -> str:
    """``value`` as literal Markdown text on one line (at most ``limit`` characters before
    escaping), safe in a heading, a list item or a table cell: no markup, no HTML, no link,
    no column break, no control character."""
    text = terminal_text(" ".join(str(value).split()))
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return _markdown_escaped(text)


def markdown_link(text: object, url: str) -> str:
    """A Markdown link: ``text`` as ``markdown_text`` writes it, ``url`` with every character
    that could end or break a link's destination (space, parentheses, angle brackets, control
    characters) percent-encoded."""
    return f"[{markdown_text(text)}]({quote(url, safe=_URL_SAFE)})"


def _markdown_escaped(text: str) -> str:
    return html.escape(_MARKDOWN.sub(r"\\\1", text), quote=False)


def _code_spans(value: object) -> list[str]:
    """``value`` on one line, split so that the odd items are its `code spans` (backticks off)."""
    parts = _CODE_SPAN.split(terminal_text(" ".join(str(value).split())))
    return [part[1:-1] if n % 2 else part for n, part in enumerate(parts)]


def markdown_prose(value: object) -> str:
    """``value`` as one line of Markdown whose `code spans` stay code spans: the text around
    them escaped as ``markdown_text`` does, their insides can hold no backtick or line break."""
    parts = _code_spans(value)
    return "".join(
        f"`{part}`" if n % 2 else _markdown_escaped(part) for n, part in enumerate(parts)
    )


def html_prose(value: object) -> str:
    """``value`` as HTML text whose `code spans` become <code> elements, all of it escaped."""
    parts = _code_spans(value)
    return "".join(
        f"<code>{html_text(part)}</code>" if n % 2 else html_text(part)
        for n, part in enumerate(parts)
    )
