"""Copy-pasteable ``curl`` reproducers. The API key is referenced, never printed.

A body too long to read in a failure message (2,049 inputs, a 2,000-token text) is written to a
file named by its hash under the system's temp directory and sent with ``--data-binary @FILE``,
so the command stays one short line and still reproduces the request byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

KEY_VARIABLE = "EMBEDDINGS_API_KEY"
INLINE_LIMIT = 2000  # characters of body printed in the command itself
BODIES = Path(tempfile.gettempdir()) / "embedding-conformance" / "bodies"


def curl_command(
    url: str,
    body: Any,
    *,
    with_auth: bool,
    content_type: str | None = "application/json",
    bodies: Path = BODIES,
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
        exact = body
    else:
        payload = json.dumps(body, ensure_ascii=False)
        if not payload.isascii() and not _encodable(payload):
            payload = json.dumps(body)  # lone surrogates: keep the \u escapes
        exact = payload.encode("utf-8")
    saved = _save(exact, bodies) if len(payload) > INLINE_LIMIT else None
    if saved is not None:
        parts += ["--data-binary", shlex.quote(f"@{saved}")]
    else:
        parts += ["-d", shlex.quote(payload)]
    return " ".join(parts)


def _save(data: bytes, folder: Path) -> Path | None:
    """The body's file (written once, atomically), or None where nothing can be written."""
    path = folder / f"{hashlib.sha256(data).hexdigest()[:20]}.body"
    if path.exists():
        return path
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, staging = tempfile.mkstemp(dir=folder, suffix=".part")
    except OSError:
        return None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(staging, path)  # readers never see half a body
    except OSError:
        Path(staging).unlink(missing_ok=True)
        return None
    return path


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
