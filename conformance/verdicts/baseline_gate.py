"""The baseline gate's judging of statuses: what does worse now than in the baseline's run.

(The gate's measurements of answers, the ``baseline.*`` requirements, are checks:
``checks/baseline.py``.)"""

from __future__ import annotations

from collections.abc import Mapping

from conformance.requirements import CATALOGUE, GATE_PREFIX
from conformance.verdicts.status import Status
from conformance.verdicts.tally import Tally

# A requirement that passed (or was supported) before and does worse now is a regression:
# also one that is no longer checked (skipped, or not run: deselected or out of the profile),
# or a bug could hide behind the change of selection.
WORSE = {
    (Status.PASS, Status.FAIL),
    (Status.PASS, Status.UNSUPPORTED),
    (Status.PASS, Status.SKIPPED),
    (Status.PASS, Status.NOT_RUN),
    (Status.UNSUPPORTED, Status.FAIL),
}


def status_regressions(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """Requirements that did worse in this run than in the baseline's run, one line each.
    ``now`` holds every requirement this suite knows ("NOT RUN" for those out of the run); one
    the baseline's suite had and this one does not is no regression."""
    return [
        f"{requirement}: {status} before, {now[requirement]} now"
        for requirement, status in before.items()
        if requirement in now and (status, now[requirement]) in WORSE
    ]


def regressions(before: Mapping[str, str], tally: Tally) -> list[str]:
    """The regressions of this run against the baseline's statuses: every requirement of the
    catalogue counts, NOT RUN when it was out of this run (the gate's own are not judged)."""
    now: dict[str, str] = {
        r.id: Status.NOT_RUN for r in CATALOGUE if not r.id.startswith(GATE_PREFIX)
    }
    now.update((r, v.status) for r, v in tally.verdicts.items())
    return status_regressions(before, now)
