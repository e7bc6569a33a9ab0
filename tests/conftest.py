"""Shared fixtures of the project's own tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.server_process import running_server

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def model_server() -> Iterator[str]:
    """Base URL of a real server over all-MiniLM-L6-v2 (routes under /<mode>/v1/...)."""
    with running_server("tests.support.model_server") as base_url:
        yield base_url


@pytest.fixture(scope="session")
def hostile_server() -> Iterator[str]:
    """Base URL of a server that misbehaves on list inputs (routes under /<behaviour>/v1/...)."""
    with running_server("tests.support.hostile_server", "--host", "0.0.0.0") as base_url:
        yield base_url
