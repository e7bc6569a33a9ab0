"""Copy-pasteable ``curl`` reproducers. The API key is referenced, never printed.

A body too long to read in a failure message (2,049 inputs, a 2,000-token text) is written to a
file named by its hash in the per-user private folder (conformance.runtime_dir: 0700, the XDG
runtime dir or a folder of the user's under the temp dir) and sent with ``--data-binary @FILE``,
so the command stays one short line and still reproduces the request byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import stat
import tempfile
from pathlib import Path
from typing import Any

from conformance.runtime_dir import private_dir

KEY_VARIABLE = "EMBEDDINGS_API_KEY"
INLINE_LIMIT = 2000  # characters of body printed in the command itself


def curl_command(
    url: str,
    body: Any,
    *,
    with_auth: bool,
    content_type: str | None = "application/json",
    bodies: Path | None = None,
) -> str:
    """``body`` is a JSON document, or ``bytes`` sent verbatim (malformed JSON, other types).
    A long body goes to a file in ``bodies`` (default: 'bodies' in the per-user private
    folder, see conformance.runtime_dir)."""
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
        payload = _visible(json.dumps(body, ensure_ascii=False))
        if not payload.isascii() and not _encodable(payload):
            payload = json.dumps(body)  # lone surrogates: keep the \u escapes
        exact = payload.encode("utf-8")
    saved = _save(exact, bodies) if len(payload) > INLINE_LIMIT else None
    if saved is not None:
        parts += ["--data-binary", shlex.quote(f"@{saved}")]
    else:
        parts += ["-d", shlex.quote(payload)]
    return " ".join(parts)


def _save(data: bytes, folder: Path | None) -> Path | None:
    """The body's file (written atomically; one found in place is kept only when it holds
    exactly these bytes), or None where nothing can be written."""
    try:
        if folder is None:
            folder = private_dir() / "bodies"
            folder.mkdir(mode=0o700, exist_ok=True)
        path = folder / f"{hashlib.sha256(data).hexdigest()[:20]}.body"
        if _holds(path, data):
            return path
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


def _holds(path: Path, data: bytes) -> bool:
    """Whether the regular file at ``path`` (not a symlink) holds exactly ``data``."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def _visible(payload: str) -> str:
    """The JSON text with every unprintable character (a BOM, zero-width characters, a soft
    hyphen, DEL, spaces but ' ') as its \\u escape: the same document, and a command that keeps
    them when it is copied from a terminal or a report."""
    if payload.isprintable():
        return payload
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in payload)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
