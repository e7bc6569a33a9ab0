"""The verdict rules applied at the end of a run, in their order: each FAIL that follows from
another FAIL of the run names it; the baseline gate compares statuses as the tests left them;
then --known-failures turns listed failures into XFAIL (and fixed ones into STALE); then
--capabilities holds the vendor's word against the answers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from conformance.verdicts.baseline_gate import regressions
from conformance.verdicts.capabilities import judge_capabilities
from conformance.verdicts.causes import attribute_causes
from conformance.verdicts.known_failures import apply_known_failures
from conformance.verdicts.records import KnownFailure
from conformance.verdicts.status import Status
from conformance.verdicts.tally import Tally


def judge_run(
    tally: Tally,
    baseline: Mapping[str, str] | None,
    known_failures: Iterable[KnownFailure],
    capabilities: dict[str, Any] | None,
) -> list[str]:
    """Apply every rule to ``tally``; the regressions against the ``baseline``'s statuses
    (none without a baseline)."""
    attribute_causes(tally)
    found = regressions(baseline, tally) if baseline is not None else []
    apply_known_failures(tally, known_failures)
    judge_capabilities(tally, capabilities)
    return found


def fails_for_rules(tally: Tally, regressions: list[str]) -> bool:
    """The run fails though no test did: a regression (e.g. a PASS now UNSUPPORTED), or a known
    failure gone stale."""
    return bool(regressions) or any(v.status is Status.STALE for v in tally.verdicts.values())
