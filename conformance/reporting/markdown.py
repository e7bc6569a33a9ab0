"""GitHub step-summary markdown from a run's results: the verdict, what did not pass, and
every requirement folded away underneath."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from conformance.reporting import style
from conformance.reporting.escape import markdown_text
from conformance.reporting.results import RequirementResult, Results
from conformance.verdicts.status import Status
from conformance.verdicts.tally import retries_text

# The order of the "not passed" table: what fails the run first, then what was not judged.
ORDER = (
    Status.FAIL,
    Status.STALE,
    Status.XFAIL,
    Status.UNSUPPORTED,
    Status.SKIPPED,
    Status.NOT_RUN,
)
CELL_LIMIT = 200  # characters; the full text is in report.html


def md_text(value: object) -> str:
    """``value`` as literal text on one line, safe in a heading or a table cell."""
    return markdown_text(value, CELL_LIMIT)


def number(value: object) -> str:
    if value is None:
        return "—"
    return md_text(f"{value:.3g}" if isinstance(value, float) else value)


def status_text(requirement: RequirementResult) -> str:
    word = style.word(requirement.status)
    return f"{word} (warning)" if requirement.is_warning else word


def explanation(requirement: RequirementResult) -> str:
    """Why a requirement did not pass: the reason it was not judged, or what failed."""
    known = requirement.known_failure
    if requirement.status is Status.STALE:
        return "known failure now passes: remove it from the known-failures file"
    if requirement.status is Status.XFAIL:
        return f"known failure: {known.reason if known else ''}"
    if requirement.reason:
        return requirement.reason
    if requirement.follows_from:
        return f"follows from {', '.join(requirement.follows_from)}: " + (
            requirement.failures[0].detail if requirement.failures else ""
        )
    return requirement.failures[0].detail if requirement.failures else ""


def table(requirements: Sequence[RequirementResult], explain: bool) -> list[str]:
    header = ["Status", "Level", "Requirement", "Measured", "Limit", "Margin"]
    header += ["Details"] if explain else []
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in requirements:
        cells = [md_text(status_text(r)), md_text(r.level), md_text(r.id)]
        cells += [number(r.measured), number(r.limit), number(r.margin)]
        cells += [md_text(explanation(r))] if explain else []
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def not_passed(results: Results) -> list[RequirementResult]:
    """Requirements that did not pass, failing MUSTs first, then in ORDER, then as listed."""

    def rank(requirement: RequirementResult) -> tuple[int, int]:
        return ORDER.index(requirement.status), int(requirement.is_warning)

    return sorted((r for r in results.requirements if r.status in ORDER), key=rank)


def counts_line(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{counts.get(count.key, 0)} {count.word}" for count in style.COUNTS)


def reference_text(reference: Mapping[str, object]) -> str:
    if reference["kind"] == "none":
        return "**none** (vectors compared with nothing)"
    return md_text(reference.get("description") or f"{reference['kind']} {reference['spec']}")


def render_summary_md(results: Results) -> str:
    """summary.md, for $GITHUB_STEP_SUMMARY."""
    run, model = results.run, results.model or "unknown model"
    lines = [
        f"## embedding-conformance: {md_text(results.verdict)} — {md_text(model)}",
        "",
        f"Endpoint {md_text(results.endpoint['url'])} · reference "
        f"{reference_text(results.reference)} · tier {md_text(run['precision'])} · profile "
        f"{md_text(run['profile'])} · suite {md_text(results.suite['version'])}",
        "",
        counts_line(results.counts) + f" · {run.get('duration_s', 0.0):.1f} s",
    ]
    retried = [r for r in results.requirements if r.retries]
    if retried:
        per = ", ".join(f"{md_text(r.id)}: {r.retries}" for r in retried)
        total = sum(r.retries for r in retried)
        lines += ["", f"{retries_text(total)} ({per})"]
    certification = results.certification
    if certification is not None:
        verdict = "CERTIFIED" if certification.certified else "NOT CERTIFIED"
        reasons = "; ".join(certification.reasons)
        lines += ["", f"**{verdict}**" + (f": {md_text(reasons)}" if reasons else "")]
    if not results.referenced:
        lines += ["", "> **No reference**: agreement with the model was not checked."]
    if results.regressions:
        lines += ["", "Baseline regressions: " + md_text(", ".join(results.regressions))]
    others = not_passed(results)
    if others:
        lines += ["", "### Not passed", "", *table(others, explain=True)]
    else:
        lines += ["", "Every requirement that ran passed."]
    everything = results.requirements
    lines += [
        "",
        f"<details><summary>All {len(everything)} requirements</summary>",
        "",
        *table(everything, explain=False),
        "",
        "</details>",
    ]
    return "\n".join(lines) + "\n"
