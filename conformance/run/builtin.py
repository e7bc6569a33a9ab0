"""``--endpoint builtin[:base64|:shm]``: run the bundled reference server for one test session."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # a run against a real endpoint loads nothing of the server
    from conformance.server.process import ServerProcess

PREFIX = "builtin"
TRANSPORTS = {
    "builtin": "auto",
    "builtin:auto": "auto",
    "builtin:base64": "base64",
    "builtin:shm": "shm",
}


def builtin_transport(endpoint: str) -> str | None:
    """The transport a 'builtin...' endpoint asks for, or None for a real URL."""
    if not endpoint.startswith(PREFIX):
        return None
    if endpoint not in TRANSPORTS:
        raise pytest.UsageError(
            f"--endpoint {endpoint!r}: use builtin, builtin:base64 or builtin:shm"
        )
    return TRANSPORTS[endpoint]


def start_builtin(transport: str, model: str | None) -> ServerProcess:
    """The bundled server on a free port serving ``model`` (any name ``embedding-conformance
    models list`` shows, or a folder; default the bundled one), for one session (stop it at the
    end). A server that does not start is the run's usage error, with the server's reason."""
    from conformance.server.process import ServerProcess, ServerStartError

    server = ServerProcess("--transport", transport, *(("--model", model) if model else ()))
    try:
        server.start()
    except ServerStartError as exc:
        hint = (
            " (is the 'server' extra installed? pip install 'embedding-conformance[server]')"
            if "ModuleNotFoundError" in exc.reason
            else ""
        )
        raise pytest.UsageError(f"the built-in server did not start: {exc.reason}{hint}") from None
    return server
