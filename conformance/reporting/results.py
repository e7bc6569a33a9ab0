"""The results document as the renderers read it: its verdicts typed, the rest (the run, the
endpoint, the server, the reference: descriptions, not verdicts) as the JSON sections they are.

``from_json`` reads a results.json of this suite or of another version (compare reads both), so
what a renderer does not need may be missing; ``requirement_result`` makes one entry from a
requirement and its verdict, ``to_json`` writes it in the layout of results.schema.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.requirements import Requirement
from conformance.verdicts.records import (
    CapabilityJudgement,
    Certification,
    CheckRecord,
    KnownFailure,
    Measured,
    Transcript,
)
from conformance.verdicts.status import Status
from conformance.verdicts.tally import Verdict

Section = Mapping[str, Any]  # a descriptive part of the document, as JSON


@dataclass(frozen=True)
class RequirementResult:
    """One requirement of a run, as results.json holds it."""

    id: str
    level: str
    status: Status
    why: str = ""
    guards: str = ""
    tests: int = 0
    duration_s: float = 0.0
    measured: Measured | None = None  # of the worst check
    limit: str | None = None
    margin: float | None = None
    worst_cases: tuple[CheckRecord, ...] = ()
    failures: tuple[Transcript, ...] = ()
    notes: tuple[str, ...] = ()
    reason: str = ""
    known_failure: KnownFailure | None = None
    capability: CapabilityJudgement | None = None
    retries: int = 0  # requests its tests sent again after a 429 or 503
    follows_from: tuple[str, ...] = ()  # the FAILs of the run its own failure follows from

    @property
    def area(self) -> str:
        return self.id.partition(".")[0]

    @property
    def fails_run(self) -> bool:
        return self.status.fails_run(self.level)

    @property
    def is_warning(self) -> bool:
        """A SHOULD that failed: reported, it fails no run."""
        return self.status is Status.FAIL and self.level == "SHOULD"

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "id": self.id,
            "area": self.area,
            "level": self.level,
            "status": self.status.value,
            "why": self.why,
            "guards": self.guards,
            "tests": self.tests,
            "duration_s": self.duration_s,
            "measured": self.measured,
            "limit": self.limit,
            "margin": self.margin,
            "worst_cases": [_worst_case(check) for check in self.worst_cases],
            "failures": [failure.to_json() for failure in self.failures],
            "notes": list(self.notes),
            "reason": self.reason,
        }
        if self.known_failure is not None:
            entry["known_failure"] = self.known_failure.to_json()
        if self.capability is not None:
            entry["capability"] = self.capability.to_json()
        if self.retries:
            entry["retries"] = self.retries
        if self.follows_from:
            entry["follows_from"] = list(self.follows_from)
        return entry

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> RequirementResult:
        requirement_id = str(entry["id"])
        known, capability = entry.get("known_failure"), entry.get("capability")
        return cls(
            id=requirement_id,
            level=str(entry["level"]),
            status=_status(entry["status"]),
            why=str(entry.get("why", "")),
            guards=str(entry.get("guards", "")),
            tests=int(entry.get("tests", 0)),
            duration_s=float(entry.get("duration_s", 0.0)),
            measured=entry.get("measured"),
            limit=entry.get("limit"),
            margin=entry.get("margin"),
            worst_cases=tuple(CheckRecord.from_json(c) for c in entry.get("worst_cases", [])),
            failures=tuple(Transcript.from_json(f) for f in entry.get("failures", [])),
            notes=tuple(str(note) for note in entry.get("notes", [])),
            reason=str(entry.get("reason") or ""),
            known_failure=None if known is None else KnownFailure.from_json(requirement_id, known),
            capability=None if capability is None else CapabilityJudgement.from_json(capability),
            retries=int(entry.get("retries", 0)),
            follows_from=tuple(str(i) for i in entry.get("follows_from", ())),
        )


def _status(text: str) -> Status:
    """A status of this suite; another version's unknown one is read as it is spelled (the
    renderers show it as text), typed as a Status only in name."""
    try:
        return Status(text)
    except ValueError:
        return text  # type: ignore[return-value]


def _worst_case(check: CheckRecord) -> dict[str, Any]:
    keys = ("test", "case", "passed", "measured", "limit", "margin", "detail")
    return {key: getattr(check, key) for key in keys}


def requirement_result(requirement: Requirement, verdict: Verdict) -> RequirementResult:
    """The entry of ``requirement`` for this run's ``verdict``."""
    return RequirementResult(
        id=requirement.id,
        level=requirement.level,
        status=verdict.status,
        why=requirement.why,
        guards=requirement.guards,
        tests=verdict.tests,
        duration_s=round(verdict.duration, 6),
        measured=verdict.measured,
        limit=verdict.limit,
        margin=verdict.margin,
        worst_cases=verdict.worst_cases,
        failures=verdict.transcripts,
        notes=tuple(dict.fromkeys(verdict.notes)),  # once each, in order
        reason=verdict.explanation,
        known_failure=verdict.known_failure,
        capability=verdict.capability,
        retries=verdict.retries,
        follows_from=verdict.follows_from,
    )


@dataclass(frozen=True)
class Results:
    """A results document: its verdicts typed, its descriptive sections as JSON."""

    verdict: Status
    requirements: tuple[RequirementResult, ...]
    counts: Mapping[str, int]
    run: Section
    endpoint: Section
    server: Section
    reference: Section
    suite: Section
    series: Section = field(default_factory=dict)
    certification: Certification | None = None
    regressions: tuple[str, ...] = ()  # against the baseline
    baseline_path: str | None = None
    integrity: Section = field(default_factory=dict)
    format: int = 1

    @property
    def model(self) -> str | None:
        model = self.endpoint.get("model")
        return str(model) if model else None

    @property
    def referenced(self) -> bool:
        return self.reference.get("kind") != "none"

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Results:
        certification = document.get("certification")
        baseline = document.get("baseline") or {}
        return cls(
            verdict=_status(document["verdict"]),
            requirements=tuple(RequirementResult.from_json(r) for r in document["requirements"]),
            counts=document.get("counts", {}),
            run=document.get("run", {}),
            endpoint=document.get("endpoint", {}),
            server=document.get("server", {}),
            reference=document.get("reference", {"kind": "none"}),
            suite=document.get("suite", {}),
            series=document.get("series", {}),
            certification=None if certification is None else Certification.from_json(certification),
            regressions=tuple(baseline.get("regressions", [])),
            baseline_path=baseline.get("path"),
            integrity=document.get("integrity", {}),
            format=int(document.get("format", 1)),
        )
