"""The ``state.*`` requirement: no request changes how the server answers the next ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from conformance.checks.compare import check_same_vectors
from conformance.checks.result import CheckResult
from conformance.wire import Matrix

FIRST = "its first answer (at the run's start)"


@dataclass(frozen=True)
class CanaryAnswer:
    """One later answer to the state canary (a fixed request of a few corpus sentences): what
    the run sent just before it, in words, and the vectors it carried (None when it carried
    none: ``problem`` says why)."""

    after: str  # e.g. "right after 2048 inputs in one request (answered HTTP 200)"
    vectors: Matrix | None
    problem: str = ""


def unchanged(first: Matrix, later: Sequence[CanaryAnswer], atol: float) -> CheckResult:
    """Every later answer to the state canary carries the vectors of its first answer, within
    ``atol`` (max |Δ| per element); the first answer that does not fails, named by the request
    that came before it. All pass: the smallest margin among them.

    A server whose caches, buffers or pools one request corrupts (a very large batch, an input
    past the context, a rejected request, a burst) answers every later request wrongly, with
    HTTP 200 and plausible shapes: zeros after one oversized request, a prefix cache that pools
    only the uncached tail, a buffer reused across requests. Each answer judged alone cannot
    see it; the same request asked again after the heaviest ones can."""
    unusable = _unusable_rows(first)
    if unusable:  # fail closed: a server poisoned before the run would pass unseen
        return CheckResult(
            False,
            f"{len(unusable)} zero or non-finite vector(s)",
            "finite, non-zero vectors",
            None,
            f"{FIRST} carries a zero or non-finite vector at index {unusable[0]}: no later "
            "answer can be compared with it (see finite.*)",
            unusable[0],
        )
    passed: list[CheckResult] = []
    for answer in later:
        what = f"the canary {answer.after} vs {FIRST}"
        if answer.vectors is None:
            problem = answer.problem or "no vectors"
            return CheckResult(False, "no vectors", f"<= {atol:g}", None, f"{what}: {problem}")
        result = check_same_vectors(answer.vectors, first, atol, what)
        if not result.passed:
            return result
        passed.append(result)
    if not passed:
        return CheckResult(False, "no later answer", "at least one", None, f"{FIRST} only")
    return min(passed, key=lambda r: float("inf") if r.margin is None else r.margin)


def _unusable_rows(matrix: Matrix) -> list[int]:
    """Rows that are all zeros or hold a non-finite value: no first answer to compare with."""
    finite = np.isfinite(matrix).all(axis=1)
    zero = ~np.any(matrix != 0, axis=1)
    return [int(i) for i in np.flatnonzero(~finite | zero)]
