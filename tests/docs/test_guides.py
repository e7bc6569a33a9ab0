"""The documentation by reader: a short README that gets a person to a first verdict and links
every guide; guides whose links lead somewhere; the options guide's table is the option table."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from conformance.cli import build_parser
from conformance.options import OPTIONS
from tests.support.scripts import load_script

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


def options_table() -> ModuleType:
    """scripts/options_table.py, which makes docs/options.md's table from the option table."""
    return load_script("options_table")


def test_the_options_guide_shows_the_table_the_options_make() -> None:
    """Every flag, variable, ini key and default as the suite reads it: the page's table is
    what scripts/options_table.py makes of OPTIONS (run it after changing an option)."""
    assert options_table().main(["--check"]) == 0


def test_a_stale_options_table_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    table = options_table()
    first = OPTIONS[0]
    changed = replace(first, default="somewhere", shown_default=None)
    monkeypatch.setattr(table, "OPTIONS", (changed, *OPTIONS[1:]))
    page = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    assert f"| `{first.flag} URL` | `EMBEDDINGS_ENDPOINT` | `embeddings_endpoint` | — |" in page
    assert "| `somewhere` |" in table.with_table(page)
    assert table.main(["--check"]) == 1


def shell_commands() -> list[tuple[str, list[str]]]:
    """Every command of the pages' sh blocks (continued lines joined, comments dropped, a
    synopsis's optional parts given)."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.DOTALL):
            for line in block.replace("\\\n", " ").splitlines():
                command = re.split(r"\s+#", line, maxsplit=1)[0].strip()
                command = command.replace("[", "").replace("]", "")  # a synopsis's optional parts
                if command and not command.startswith("#"):
                    found.append((page.name, shlex.split(command)))
    return found


COMMANDS = shell_commands()
OURS = [(page, argv) for page, argv in COMMANDS if argv[0] == "embedding-conformance"]
PYTEST = [(page, argv) for page, argv in COMMANDS if argv[0] == "pytest"]
PYTEST_OWN = {"-n", "-k", "-x", "-m"}  # pytest's and xdist's, as the pages use them


@pytest.mark.parametrize(
    ("page", "argv"), OURS, ids=lambda x: " ".join(x) if isinstance(x, list) else x
)
def test_every_command_of_ours_in_the_pages_parses(page: str, argv: list[str]) -> None:
    """Each names a subcommand and flags the command has (none is run here: they serve, fetch
    or build; the cheap ones run in their own tests)."""
    build_parser().parse_args(argv[1:])


@pytest.mark.parametrize(
    ("page", "argv"), PYTEST, ids=lambda x: " ".join(x) if isinstance(x, list) else x
)
def test_every_pytest_command_in_the_pages_uses_flags_that_exist(
    page: str, argv: list[str]
) -> None:
    flags = {spec.flag for spec in OPTIONS} | PYTEST_OWN
    used = {arg.split("=", 1)[0] for arg in argv[1:] if arg.startswith("-")}
    assert used <= flags, used - flags


def test_the_pages_have_commands_to_check() -> None:
    assert len(OURS) >= 15 and len(PYTEST) >= 5
