"""Copy-pasteable ``curl`` reproducers. The API key is referenced, never printed."""

from __future__ import annotations

import json
import shlex
from typing import Any

KEY_VARIABLE = "EMBEDDINGS_API_KEY"


def curl_command(url: str, body: Any, *, with_auth: bool) -> str:
    parts = ["curl", "-sS", shlex.quote(url), "-H", "'Content-Type: application/json'"]
    if with_auth:
        # Double quotes so the shell expands the variable; the key itself never appears.
        parts += ["-H", f'"Authorization: Bearer ${KEY_VARIABLE}"']
    payload = json.dumps(body, ensure_ascii=False)
    parts += ["-d", shlex.quote(payload)]
    return " ".join(parts)
