"""One cause, one FAIL: a requirement that failed only because the server's answer left it
unmeasurable, for a reason another requirement judges, follows from that requirement's FAIL.

Base64 that never came cannot be decoded, and vectors of the wrong length cannot be the
renormalized prefix: those FAILs say nothing the first did not. Each keeps its status (the run
fails closed: had the first passed, the second would have been a failure in its own right); the
rule only names, after the run, the FAILs of the same run it follows from, so that the reports
show it under its cause. It applies when every failure of the requirement names such a cause
and one of them failed at a level at least as strong as its own (a SHOULD's warning does not
explain a MUST's failure)."""

from __future__ import annotations

from dataclasses import replace

from conformance.verdicts.status import Status
from conformance.verdicts.tally import Tally, Verdict

STRENGTH = {"SHOULD": 0, "MUST": 1}


def names(pattern: str, requirement: str) -> bool:
    """``pattern`` is a requirement id, or ``area.*`` for every requirement of an area."""
    if pattern.endswith(".*"):
        return requirement.startswith(pattern[:-1])
    return requirement == pattern


def causes_of(requirement: str, verdict: Verdict, verdicts: dict[str, Verdict]) -> tuple[str, ...]:
    """The FAILs of the run that ``verdict``'s failure follows from (none: it stands alone)."""
    transcripts = verdict.transcripts
    if verdict.status is not Status.FAIL or not transcripts:
        return ()
    if not all(transcript.follows_from for transcript in transcripts):
        return ()  # one failure of its own is enough to stand alone
    patterns = {pattern for transcript in transcripts for pattern in transcript.follows_from}
    return tuple(
        other
        for other, cause in verdicts.items()
        if other != requirement
        and cause.status is Status.FAIL
        and STRENGTH[cause.level] >= STRENGTH[verdict.level]
        and any(names(pattern, other) for pattern in patterns)
    )


def attribute_causes(tally: Tally) -> None:
    """Name, on each FAIL that follows from others of the run, the FAILs it follows from."""
    verdicts = dict(tally.verdicts)
    for requirement, verdict in verdicts.items():
        causes = causes_of(requirement, verdict, verdicts)
        if causes:
            tally.verdicts[requirement] = replace(verdict, follows_from=causes)
