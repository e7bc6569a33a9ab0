"""The ``concurrency.*`` requirement: simultaneous requests each get their own answer."""

from __future__ import annotations

from collections.abc import Sequence

from conformance.checks.compare import check_same_vectors
from conformance.checks.result import CheckResult
from conformance.wire import Matrix


def isolation(together: Matrix, serial: Matrix, atol: float, what: str) -> CheckResult:
    """The answers to requests sent at once equal the answers sent one after another.

    Catches buffers shared between requests and responses routed to the wrong caller."""
    return check_same_vectors(together, serial, atol, what)


def in_a_burst(answered: CheckResult | None, status: int, what: str) -> CheckResult:
    """A request of a burst (a few short texts, valid alone) is owed its rows: a clean refusal
    of it (``answered`` None), sent while others were in flight, is none."""
    if answered is None:
        return CheckResult(False, f"HTTP {status}", "HTTP 200", None, f"{what}: refused")
    return answered


def mixed_bursts(examples: int, violations: Sequence[CheckResult]) -> CheckResult:
    """Every burst of requests sent at once (different sizes, some texts shared between them)
    got, in each answer, input i's own vector (its answer alone) at index i. Catches an
    in-flight cache shared by requests with the same text, and indices counted across the
    engine batch that concurrent requests were merged into. The last violation is reported
    (Hypothesis tries the smallest failing burst last)."""
    if violations:
        return violations[-1]
    return CheckResult(True, examples, "bursts without a violation", None, "concurrent bursts")
