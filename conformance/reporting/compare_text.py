"""What every renderer of a comparison says alike: a run's verdict and setup, a status at its
level, a measurement's move, the diff's summary. Plain text: each renderer escapes it for its
medium (every string of a document is the server's or a user's)."""

from __future__ import annotations

from conformance.checks.result import format_value
from conformance.reporting import style
from conformance.reporting.compare import Diff, Move, Run, section_of, text_of
from conformance.reporting.wording import plural

# What the table's cells mean, printed under it.
TABLE_KEY = "N/A: not applicable; —: not in that run; FAIL of a SHOULD: a warning"
FOLLOWS_KEY = "FAIL (follows): not measurable because another FAIL of that run failed"


def verdict_of(run: Run) -> str:
    if run.absent:
        return "NO RESULTS"
    verdict = run.document.get("verdict")
    return verdict if isinstance(verdict, str) else "?"


def setup_of(run: Run) -> str:
    """Suite version, tier, profile and reference of a run (or why it has no results), for the
    list of runs."""
    if run.absent:
        return run.absent
    suite, setup = section_of(run.document, "suite"), section_of(run.document, "run")
    reference = section_of(run.document, "reference")
    parts = [
        f"suite {suite.get('version')}",
        f"{setup.get('precision')}",
        f"profile {setup.get('profile')}",
        f"reference {text_of(reference.get('name')) or reference.get('kind')}",
    ]
    return ", ".join(str(part) for part in parts)


def status_word(level: str, status: str, follows: bool = False) -> str:
    """A displayed status, marked when it is a failed SHOULD (a warning, not a failure) and
    when it follows from another FAIL of its run."""
    marks = ["warning"] if style.is_warning(status, level) else []
    marks += ["follows"] if follows else []
    return f"{status} ({', '.join(marks)})" if marks else status


def move_cells(move: Move) -> tuple[str, str, str, str]:
    """Before, after, how far it moved, how far it may: as every renderer shows a move."""
    return (
        format_value(move.before),
        format_value(move.after),
        f"{abs(move.after - move.before):.3g}",
        f"{move.allowed:g}",
    )


def move_word(move: Move) -> str:
    return "worse" if move.worse else "better"


def summary(d: Diff) -> str:
    regressions = d.regressions
    if not regressions:
        return "No regressions."
    return f"{plural(len(regressions), 'regression')}: " + ", ".join(regressions)
