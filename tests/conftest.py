"""Shared fixtures of the project's own tests: the bundled reference server, a hostile server."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from conformance.server.process import ServerProcess
from conformance.server.runtime import OPENMP_WAIT_SETTINGS
from tests.support.server_process import running_server

pytest_plugins = ["pytester"]

API_KEY = "secret-test-key"

# These tests run many servers side by side on few cores: OpenMP threads that spin for work
# (the workers' default, for cores of their own) take the cores the others need. A whole run
# took 25 min so, 15 with threads that sleep at once. A setting of the caller's wins.
if not any(key in os.environ for key in OPENMP_WAIT_SETTINGS):
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


def reference_server(*args: str) -> ServerProcess:
    """The bundled server (`python -m conformance.server --port 0 ...`) for a with-block."""
    return running_server("conformance.server", *args)


@pytest.fixture(scope="session")
def clean_server() -> Iterator[str]:
    """A correct reference server (transport auto: shared memory on this machine)."""
    with reference_server() as base_url:
        yield base_url


@pytest.fixture(scope="session")
def auth_server() -> Iterator[str]:
    """A correct reference server that requires 'Authorization: Bearer <API_KEY>'."""
    with reference_server("--api-key", API_KEY) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def hostile_server() -> Iterator[str]:
    """Base URL of a server that misbehaves on list inputs (routes under /<behaviour>/v1/...)."""
    with running_server("tests.support.hostile_server", "--host", "0.0.0.0") as base_url:
        yield base_url
