"""How a server describes itself, to label its runs: the models it lists, its Server header and,
where it has one (vLLM does), its GET /version."""

from __future__ import annotations

from typing import Any

from conformance.client import EndpointError, HttpClient
from conformance.client.models import decode_models
from conformance.references.sources import server_version


def server_fingerprint(client: HttpClient) -> dict[str, Any]:
    """The ids the models route lists (those it lists well-formed: a label never fails a
    report), the Server header and the version."""
    models: list[str] = []
    header = None
    try:
        reply = client.get_models()
        header = reply.headers.get("server")
        models = list(decode_models(reply.status, reply.raw).ids)
    except EndpointError:
        pass  # a fingerprint is a label: a server without one is still tested
    return {"models": models, "server_header": header, "version": server_version(client)}
