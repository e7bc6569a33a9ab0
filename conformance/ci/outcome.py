"""What one run of the suite came to, in the terms a CI step reports: the verdict, the MUSTs
passed and failed, the certificate; or why there was no run (the endpoint unreachable, another
usage error). Pure functions of the results document and the run's output."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

PREFLIGHT = "embedding-conformance preflight failed: "
NO_ANSWER = "no usable answer from the endpoint"
# pytest prints a usage error as "ERROR: <message>" (the suite's own usage errors start
# "embedding-conformance"), then exits 4
USAGE_LINE = re.compile(r"^ERROR: (embedding-conformance.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Outcome:
    verdict: str  # PASS, FAIL (results.json's), UNREACHABLE or ERROR (no results)
    must_passed: int = 0
    must_failed: int = 0
    certified: bool | None = None  # None: not a --certify run
    message: str = ""  # why there are no results

    def outputs(self, results: str) -> dict[str, str]:
        certified = "" if self.certified is None else str(self.certified).lower()
        return {
            "verdict": self.verdict,
            "must-passed": str(self.must_passed),
            "must-failed": str(self.must_failed),
            "certified": certified,
            "results": results,
        }


def from_results(document: dict[str, Any]) -> Outcome:
    """The outcome a results.json records."""
    musts = [r for r in document.get("requirements", []) if r.get("level") == "MUST"]
    certification = document.get("certification")
    return Outcome(
        verdict=str(document.get("verdict", "ERROR")),
        must_passed=sum(r.get("status") == "PASS" for r in musts),
        must_failed=sum(r.get("status") == "FAIL" for r in musts),
        certified=bool(certification["certified"]) if certification else None,
    )


def without_results(output: str) -> Outcome:
    """The outcome of a run that wrote no results: UNREACHABLE when the preflight had no answer
    from the endpoint (for a drift watch: the server is down, not drifting), else ERROR, with
    pytest's message."""
    found = USAGE_LINE.findall(output)
    message = found[-1] if found else _tail(output)
    if message.startswith(PREFLIGHT) and message[len(PREFLIGHT) :].startswith(NO_ANSWER):
        return Outcome("UNREACHABLE", message=message)
    return Outcome("ERROR", message=message)


def summary_without_results(outcome: Outcome) -> str:
    """The job summary of a run with no results."""
    title = {
        "UNREACHABLE": "the endpoint is unreachable: nothing was judged",
        "ERROR": "the suite could not run: nothing was judged",
    }[outcome.verdict]
    return f"### embedding-conformance: {title}\n\n```\n{outcome.message}\n```\n"


def _tail(output: str, lines: int = 20) -> str:
    return "\n".join(output.strip().splitlines()[-lines:]) or "(no output)"
