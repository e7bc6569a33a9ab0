"""The verdict of one check: what was measured, against which limit, with what margin."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    measured: float | int | str
    limit: str  # human-readable bound, e.g. "<= 1e-05" or "== 384"
    margin: float | None  # headroom to the limit; negative when violated, None if not numeric
    detail: str  # what was measured, in words, naming the worst input
    index: int | None = None  # position of the worst input in the request, if any
    # requirements whose failure left this one unmeasurable ("area.*" names an area): when one
    # of them fails in the same run, this failure follows from it (verdicts/causes.py)
    follows_from: tuple[str, ...] = ()

    def describe(self) -> str:
        margin = "" if self.margin is None else f", margin {self.margin:.3g}"
        return f"measured {format_value(self.measured)} vs allowed {self.limit}{margin}: " + (
            self.detail
        )


# What a requirement judged by several measurements returns: each one, in the order they are
# reported (the first failure is the one a MUST fails with).
Verdicts = tuple[CheckResult, ...]


def format_value(value: object) -> str:
    """Floats to 3 significant digits (measurements, not identities); the rest as is."""
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def at_most(measured: float, limit: float, detail: str, index: int | None = None) -> CheckResult:
    """Pass when ``measured <= limit``; the margin is ``limit - measured``."""
    measured, limit = float(measured), float(limit)  # plain floats travel through xdist
    if not math.isfinite(measured):  # NaN compares false with everything: say so, fail
        return CheckResult(
            False,
            str(measured),
            f"<= {limit:g}",
            None,
            f"{detail} (non-finite values in the data)",
            index,
        )
    return CheckResult(
        measured <= limit, measured, f"<= {limit:g}", limit - measured, detail, index
    )


def no_offenders(offenders: Sequence[int], total: int, what: str, example: str) -> CheckResult:
    """Pass when no input offends; measured is the count of offending inputs."""
    count = len(offenders)
    first = offenders[0] if offenders else None
    detail = f"{count} of {total} {what}" + (
        f"; first at index {first}: {example}" if count else ""
    )
    return CheckResult(count == 0, count, "== 0", float(-count), detail, first)


def equals(
    measured: object, expected: object, detail: str, index: int | None = None
) -> CheckResult:
    """Pass when ``measured == expected`` (non-numeric margin)."""
    return CheckResult(
        measured == expected, repr(measured), f"== {expected!r}", None, detail, index
    )
