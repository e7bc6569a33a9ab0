"""``--certify``: what a certification run refuses before it starts (exit 4), not noted after.

A certificate says every requirement was judged, against a reference, with nothing waived; so
anything that narrows the run or excuses a failure is refused up front. The verdict after the run
is a rule of its own (``verdicts.certification``).
"""

from __future__ import annotations

import pytest

from conformance.run.settings import Settings
from conformance.tolerances import FUZZ_EXAMPLES


def certify_refusals(settings: Settings, config: pytest.Config) -> list[str]:
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


def refuse_uncertifiable(settings: Settings, config: pytest.Config) -> None:
    """A usage error (exit 4, before any test) when this run cannot certify."""
    refused = certify_refusals(settings, config)
    if refused:
        raise pytest.UsageError(
            "embedding-conformance --certify runs every requirement against a "
            f"reference, so it refuses: {'; '.join(refused)}"
        )
