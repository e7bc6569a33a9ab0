"""The files a GitHub Actions step writes its results into: the job summary and the step's
outputs. Outside a runner (the variables unset) summaries go to standard output and outputs are
printed as NAME=VALUE, so the commands say the same things when run by hand."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path


def append_summary(markdown: str) -> None:
    """Add ``markdown`` to the job summary ($GITHUB_STEP_SUMMARY)."""
    _append("GITHUB_STEP_SUMMARY", markdown if markdown.endswith("\n") else markdown + "\n")


def set_outputs(values: Mapping[str, str]) -> None:
    """Set the step's outputs ($GITHUB_OUTPUT). A value with a line break is written between
    delimiters no value can hold, as GitHub's multiline syntax asks."""
    lines = []
    for name, value in values.items():
        if "\n" in value or "\r" in value:
            delimiter = f"EOF_{secrets.token_hex(8)}"
            lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            lines.append(f"{name}={value}\n")
    _append("GITHUB_OUTPUT", "".join(lines))


def _append(variable: str, text: str) -> None:
    target = os.environ.get(variable)
    if not target:
        print(text, end="")
        return
    with Path(target).open("a", encoding="utf-8") as file:
        file.write(text)
