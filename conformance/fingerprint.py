"""How a server describes itself, to label its runs: the models it lists, its Server header and,
where it has one (vLLM does), its GET /version."""

from __future__ import annotations

import json
from typing import Any

from conformance.client import EndpointError, HttpClient
from conformance.references.sources import server_version


def server_fingerprint(client: HttpClient) -> dict[str, Any]:
    models: list[str] = []
    header = None
    try:
        reply = client.get_models()
        header = reply.headers.get("server")
        listed = json.loads(reply.raw).get("data", []) if reply.status == 200 else []
        models = [str(m["id"]) for m in listed if isinstance(m, dict) and "id" in m]
    except (EndpointError, ValueError, AttributeError):
        pass  # a fingerprint is a label: a server without one is still tested
    return {"models": models, "server_header": header, "version": server_version(client)}
