"""Copy-pasteable ``curl`` reproducers. The API key is referenced, never printed."""

from __future__ import annotations

import json
import shlex
from typing import Any

KEY_VARIABLE = "EMBEDDINGS_API_KEY"


def curl_command(
    url: str, body: Any, *, with_auth: bool, content_type: str | None = "application/json"
) -> str:
    """``body`` is a JSON document, or ``bytes`` sent verbatim (malformed JSON, other types)."""
    parts = ["curl", "-sS", shlex.quote(url)]
    if content_type:
        parts += ["-H", shlex.quote(f"Content-Type: {content_type}")]
    if with_auth:
        # Double quotes so the shell expands the variable; the key itself never appears.
        parts += ["-H", f'"Authorization: Bearer ${KEY_VARIABLE}"']
    if isinstance(body, bytes):
        payload = body.decode("utf-8", "backslashreplace")
    else:
        payload = json.dumps(body, ensure_ascii=False)
        if not payload.isascii() and not _encodable(payload):
            payload = json.dumps(body)  # lone surrogates: keep the \u escapes
    parts += ["-d", shlex.quote(payload)]
    return " ".join(parts)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
