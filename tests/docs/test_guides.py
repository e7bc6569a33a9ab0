"""The documentation by reader: a short README that gets a person to a first verdict and links
every guide; guides whose links lead somewhere; the options guide's table is the option table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.options import OPTIONS

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, ROOT / "CONTRIBUTING.md", *GUIDES]
README_LINES = 300
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_is_short_and_links_every_guide() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.count("\n") <= README_LINES
    linked = {ROOT / target for target in LINK.findall(text)}
    assert set(GUIDES) | {ROOT / "CONTRIBUTING.md"} <= linked


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    targets = [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]
    missing = [t for t in targets if not (page.parent / t).exists()]
    assert missing == []


def test_the_options_guide_lists_every_option_as_the_table_holds_it() -> None:
    """Each row's flag, environment variables and ini key are the option's own."""
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip("|"))]
        if line.startswith("| `--") and len(cells) == 5:
            rows[cells[0].strip("`").split()[0]] = cells
    assert set(rows) == {spec.flag for spec in OPTIONS}
    for spec in OPTIONS:
        _, env, ini, _, _ = rows[spec.flag]
        assert re.findall(r"`([A-Z0-9_]+)`", env) == list(spec.env), spec.flag
        assert ini == f"`{spec.ini}`", spec.flag
