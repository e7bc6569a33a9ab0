"""The one enumeration of a requirement's status, and the rules that read only a status."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """A requirement's status in a run. A ``str``: it compares equal to, and serializes as,
    its value, which is what results.json and the wire carry."""

    PASS = "PASS"
    FAIL = "FAIL"  # a failed SHOULD is a FAIL too: shown as a warning, it fails no run
    UNSUPPORTED = "UNSUPPORTED"  # an optional feature cleanly refused
    SKIPPED = "SKIPPED"  # not applicable here, with a reason (shown as N/A)
    NOT_RUN = "NOT RUN"  # deselected (-k, -m, --requirements) or out of the profile
    XFAIL = "XFAIL"  # failed as a --known-failures entry says it does
    STALE = "STALE"  # a --known-failures entry whose requirement now passes

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def fails_run(self, level: str) -> bool:
        """A MUST that failed, or a known failure gone stale: the run fails for it."""
        return self is Status.STALE or (self is Status.FAIL and level == "MUST")

    @property
    def judged(self) -> bool:
        """Whether the requirement was judged at all (UNSUPPORTED, N/A, NOT RUN, XFAIL: not)."""
        return self in (Status.PASS, Status.FAIL, Status.STALE)


# When tests disagree about a requirement, the more serious status wins.
PRECEDENCE = (Status.FAIL, Status.PASS, Status.UNSUPPORTED, Status.SKIPPED)


def status_of(text: str) -> Status:
    """The status named ``text`` (ValueError for a name this suite does not know)."""
    return Status(text)
