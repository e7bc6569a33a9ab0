"""``--certify``: a certification's verdict after the run (what it refuses before the run
starts is the run's: ``run.certify``).

A certificate says every requirement was judged, against a reference, with nothing waived.
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.verdicts.records import Certification
from conformance.verdicts.status import Status
from conformance.verdicts.tally import Tally


def certification(tally: Tally, regressions: Sequence[str], referenced: bool) -> Certification:
    """CERTIFIED when the run's verdict is PASS: every MUST passed or is an optional feature
    cleanly refused (UNSUPPORTED); SHOULD findings are reported, not held against it."""
    verdicts = tally.in_order()
    reasons = [f"{r.id} {v.status} ({r.level})" for r, v in verdicts if v.status.fails_run(r.level)]
    reasons += [f"baseline regression: {line}" for line in regressions]
    not_run = [r.id for r, v in verdicts if v.status is Status.NOT_RUN]
    if not_run:
        reasons.append(f"not run: {', '.join(not_run)}")
    if not referenced:
        reasons.append("no reference: vectors compared with nothing")
    return Certification(not reasons, tuple(reasons))
