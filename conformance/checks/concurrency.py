"""The ``concurrency.*`` requirement: simultaneous requests each get their own answer."""

from __future__ import annotations

from conformance.checks.compare import check_same_vectors
from conformance.checks.result import CheckResult
from conformance.wire import Matrix


def isolation(together: Matrix, serial: Matrix, atol: float, what: str) -> CheckResult:
    """The answers to requests sent at once equal the answers sent one after another.

    Catches buffers shared between requests and responses routed to the wrong caller."""
    return check_same_vectors(together, serial, atol, what)
