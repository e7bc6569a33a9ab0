"""Every record the verdict rules make or read: what one check recorded (``CheckRecord``),
what a failure leaves for the reports (``Transcript``), a vendor's known failure
(``KnownFailure``), what a declared capability came to (``CapabilityJudgement``) and a
certification's verdict (``Certification``). They cross process and file boundaries as plain
data: xdist ships a test's ``user_properties`` between processes, results.json stores them;
``to_json``/``from_json`` are the only conversions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from conformance.checks.result import CheckResult

Measured = float | int | str


@dataclass(frozen=True)
class CheckRecord:
    """One check's outcome on one test: the measurement, its limit and margin, the input it
    names, and (on a failure) the transcript of the exchange behind it."""

    requirement: str
    passed: bool
    measured: Measured
    limit: str
    margin: float | None
    detail: str
    index: int | None = None  # position of the worst input in the request
    case: str | None = None  # that input's case id
    response: str | None = None  # the server's answer, on a failure
    reproducer: str | None = None  # a curl command that sends the request again
    test: str = ""  # the test's node id, once the tally has placed it
    follows_from: tuple[str, ...] = ()  # requirements whose failure left it unmeasurable

    @classmethod
    def of(cls, requirement: str, result: CheckResult, case: str | None = None) -> CheckRecord:
        return cls(requirement, **asdict(result), case=case)

    def in_test(self, nodeid: str) -> CheckRecord:
        return replace(self, test=nodeid)

    def to_json(self) -> dict[str, Any]:
        """Plain data; the transcript and the test only when there is one."""
        data = asdict(self)
        for key in ("response", "reproducer"):
            if data[key] is None:
                del data[key]
        if self.follows_from:
            data["follows_from"] = list(self.follows_from)
        else:
            del data["follows_from"]
        if not self.test:
            del data["test"]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckRecord:
        return cls(
            requirement=str(data.get("requirement", "")),
            passed=bool(data["passed"]),
            measured=data.get("measured", ""),
            limit=str(data.get("limit", "")),
            margin=data.get("margin"),
            detail=str(data.get("detail", "")),
            index=data.get("index"),
            follows_from=tuple(str(i) for i in data.get("follows_from", ())),
            case=data.get("case"),
            response=data.get("response"),
            reproducer=data.get("reproducer"),
            test=str(data.get("test") or ""),
        )

    def severity(self) -> tuple[bool, float]:
        """For sorting: failed checks first, then the smallest margin (none: last)."""
        return self.passed, float("inf") if self.margin is None else float(self.margin)

    def worse_than(self, other: CheckRecord | None) -> bool:
        """A failure is worse than a pass; then the smaller margin (a margin beats none)."""
        if other is None:
            return True
        if other.passed != self.passed:
            return not self.passed
        if self.margin is None:
            return False
        return other.margin is None or self.margin < other.margin


@dataclass(frozen=True)
class Transcript:
    """A failure as the reports show it: which test, what failed, what came back, and how to
    send the request again (response and reproducer only when an exchange was behind it)."""

    test: str
    detail: str
    case: str | None = None
    response: str | None = None
    reproducer: str | None = None
    follows_from: tuple[str, ...] = ()  # requirements whose failure left it unmeasurable

    @classmethod
    def of(cls, check: CheckRecord) -> Transcript:
        return cls(
            check.test,
            check.detail,
            check.case,
            check.response,
            check.reproducer,
            check.follows_from,
        )

    def line(self) -> str:
        return f"{self.test}: {self.detail}"

    def to_json(self) -> dict[str, Any]:
        data = {key: getattr(self, key) for key in ("test", "detail", "response", "reproducer")}
        return {**data, "follows_from": list(self.follows_from)} if self.follows_from else data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Transcript:
        return cls(
            str(data.get("test", "")),
            str(data.get("detail", "")),
            data.get("case"),
            data.get("response"),
            data.get("reproducer"),
            tuple(str(i) for i in data.get("follows_from", ())),
        )


@dataclass(frozen=True)
class KnownFailure:
    requirement: str
    reason: str
    link: str | None = None
    case: str | None = None

    def covers(self, requirement: str, case: str | None) -> bool:
        return requirement == self.requirement and self.case in (None, case)

    def to_json(self) -> dict[str, Any]:
        """As results.json shows it under a requirement (the requirement is its key)."""
        return {"reason": self.reason, "link": self.link, "case": self.case}

    @classmethod
    def from_json(cls, requirement: str, data: Mapping[str, Any]) -> KnownFailure:
        return cls(requirement, str(data.get("reason", "")), data.get("link"), data.get("case"))


@dataclass(frozen=True)
class CapabilityJudgement:
    """The capability that measures a requirement, whether it was declared, and what the
    vendor's word came to against the answers."""

    name: str
    declared: bool
    judgement: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CapabilityJudgement:
        return cls(str(data.get("name", "")), bool(data.get("declared")), str(data["judgement"]))


@dataclass(frozen=True)
class Certification:
    certified: bool
    reasons: tuple[str, ...]  # why not (empty when certified)

    def to_json(self) -> dict[str, Any]:
        return {"certified": self.certified, "reasons": list(self.reasons)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Certification:
        return cls(bool(data["certified"]), tuple(str(r) for r in data.get("reasons", [])))

    def line(self) -> str:
        """``CERTIFIED: ...`` or ``NOT CERTIFIED: ...``, for the terminal."""
        word = "CERTIFIED" if self.certified else "NOT CERTIFIED"
        return f"{word}: " + ("; ".join(self.reasons) or "every MUST passed")
