"""The documentation by reader: a short README that gets a person to a first verdict and links
every guide; guides whose links lead somewhere; the options guide's table is the option table."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conformance.cli import build_parser
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
