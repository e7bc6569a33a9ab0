"""``--certify``: what a certification run refuses before it starts, and its verdict after.

A certificate says every requirement was judged, against a reference, with nothing waived; so
anything that narrows the run or excuses a failure is refused up front (exit 4), not noted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pytest

from conformance.tolerances import FUZZ_EXAMPLES
from conformance.verdicts.status import Status
from conformance.verdicts.tally import Tally


class RunScope(Protocol):
    """What of the run's settings a certification looks at (``settings.Settings`` has it; the
    rules take it by shape so that they need not import the options layer above them)."""

    @property
    def requirements(self) -> Sequence[str] | None: ...
    @property
    def fuzz_examples(self) -> int: ...
    @property
    def profile(self) -> str: ...
    @property
    def known_failures(self) -> Mapping[str, Any] | None: ...
    @property
    def reference(self) -> str | None: ...


def certify_refusals(settings: RunScope, config: pytest.Config) -> list[str]:
    """Why this run cannot certify (empty: it can)."""
    option = config.option
    refused = [
        f"-k {option.keyword!r}" if option.keyword else "",
        f"-m {option.markexpr!r}" if option.markexpr else "",
        "--deselect" if getattr(option, "deselect", None) else "",
        "-x/--maxfail (the run must not stop early)" if option.maxfail else "",
        "--last-failed/--failed-first" if getattr(option, "lf", False) else "",
        "test paths (the packaged suite runs whole)"
        if config.args_source == pytest.Config.ArgsSource.ARGS
        else "",
        "--requirements" if settings.requirements else "",
        f"--fuzz-examples {settings.fuzz_examples} (fewer than {FUZZ_EXAMPLES})"
        if settings.fuzz_examples < FUZZ_EXAMPLES
        else "",
        f"--conformance-profile {settings.profile}" if settings.profile != "full" else "",
        "--known-failures (nothing is waived)" if settings.known_failures else "",
        "--reference none (vectors must be compared)" if settings.reference == "none" else "",
    ]
    return [reason for reason in refused if reason]


def refuse_uncertifiable(settings: RunScope, config: pytest.Config) -> None:
    """A usage error (exit 4, before any test) when this run cannot certify."""
    refused = certify_refusals(settings, config)
    if refused:
        raise pytest.UsageError(
            "embedding-conformance --certify runs every requirement against a "
            f"reference, so it refuses: {'; '.join(refused)}"
        )


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
