"""``--capabilities FILE``: the optional features a vendor declares their server has.

Without a declaration, a cleanly refused optional feature is UNSUPPORTED (a server need not
have it). With one, the vendor's word is held against the answers: a declared feature that is
refused or wrong FAILS; one served but not declared is noted. The file is TOML::

    [capabilities]
    token_ids = true     # input as token-id arrays
    dimensions = true    # the 'dimensions' request parameter
    base64 = true        # encoding_format=base64 (part of the API: cannot be declared away)
    normalized = true    # unit-length output (sets what normalization.unit-norm expects)
    max_batch = 2048     # inputs per request
    max_tokens = 512     # context length in tokens
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from conformance.requirements import BY_ID, CATALOGUE, Capability
from conformance.tolerances import LARGE_BATCH
from conformance.verdicts.records import CapabilityJudgement
from conformance.verdicts.status import Status
from conformance.verdicts.tally import Tally

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


PROMISE_KEPT = {Status.PASS: "declared, and served right", Status.FAIL: "declared, and FAILS"}
KINDS: dict[Capability, type] = {
    "token_ids": bool,
    "dimensions": bool,
    "base64": bool,
    "normalized": bool,
    "max_batch": int,
    "max_tokens": int,
}
# capability -> the requirements that measure it, as the catalogue says
MEASURED_BY: dict[Capability, tuple[str, ...]] = {
    name: tuple(r.id for r in CATALOGUE if r.capability == name) for name in KINDS
}


def load_capabilities(path: str | Path) -> dict[str, Any]:
    """{capability: value} as declared; unknown names and wrong types are errors."""
    try:
        document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: not a readable TOML file ({exc})") from None
    declared = document.get("capabilities")
    if not isinstance(declared, dict) or set(document) != {"capabilities"}:
        raise ValueError(f"{path}: expected one [capabilities] table")
    for name, value in declared.items():
        if name not in KINDS:
            raise ValueError(f"{path}: unknown capability {name!r} (one of {', '.join(KINDS)})")
        kind = KINDS[name]
        count = value if kind is int and isinstance(value, int) else 1
        if type(value) is not kind or count < 1:
            raise ValueError(f"{path}: {name} must be a {kind.__name__}")
    if declared.get("base64") is False:
        raise ValueError(
            f"{path}: base64 = false: encoding_format=base64 is part of the "
            "OpenAI API contract and cannot be declared away"
        )
    return dict(declared)


def claims(declared: dict[str, Any], requirement: str) -> str | None:
    """The declared capability that makes ``requirement`` a promise (None: not promised)."""
    name = BY_ID[requirement].capability
    return name if name is not None and _promised(name, declared.get(name)) else None


def _promised(name: str, value: Any) -> bool:
    if name == "max_batch":
        return isinstance(value, int) and value >= LARGE_BATCH
    return value is True


def judge_capabilities(tally: Tally, declared: dict[str, Any] | None) -> None:
    """Annotate every requirement of an optional feature with what was declared and found
    (nothing without a --capabilities file)."""
    if declared is None:
        return
    for name, requirements in MEASURED_BY.items():
        promised = _promised(name, declared.get(name))
        for requirement in requirements:
            verdict = tally.verdicts.get(requirement)
            if verdict is None or verdict.status is Status.NOT_RUN:
                continue
            notes: tuple[str, ...] = ()
            if promised:
                judgement = PROMISE_KEPT.get(verdict.status, f"declared; {verdict.status}")
            elif verdict.status is Status.PASS:
                judgement = "served, but not declared"
                notes = (f"{name} is served, but not declared in --capabilities",)
            else:
                judgement = f"not declared; {verdict.status}"
            judged = CapabilityJudgement(name, promised, judgement)
            tally.annotate(requirement, notes, capability=judged)
