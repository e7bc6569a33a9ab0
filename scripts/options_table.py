"""docs/options.md's table of options, made from the option table (conformance/options.py), so
that a flag, a variable, an ini key or a default cannot drift from what the suite reads.

    python scripts/options_table.py           rewrite the table in docs/options.md
    python scripts/options_table.py --check   exit 1 if the page's table is not what this makes
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.options import OPTIONS, OptionSpec

PAGE = Path(__file__).resolve().parents[1] / "docs" / "options.md"
HEADER = "| flag | env | ini | default | meaning |\n|---|---|---|---|---|\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # a pipe inside a cell would end it


def _default(spec: OptionSpec) -> str:
    if spec.shown_default is not None:
        return spec.shown_default
    value = spec.default
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int):
        return str(value)
    return f"`{value}`"


def row(spec: OptionSpec) -> str:
    flag = f"{spec.flag} {spec.metavar}" if spec.metavar else spec.flag
    env = ", then ".join(f"`{name}`" for name in spec.env)
    cells = (f"`{flag}`", env, f"`{spec.ini}`", _default(spec), spec.summary)
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |\n"


def table() -> str:
    return HEADER + "".join(row(spec) for spec in OPTIONS)


def with_table(page: str) -> str:
    """The page with its table (the header line to the first line that is not a row) replaced."""
    start = page.index(HEADER)
    end = start + len(HEADER)
    while page.startswith("|", end):
        end = page.index("\n", end) + 1
    return page[:start] + table() + page[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check the page; exit 1 if stale")
    args = parser.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    made = with_table(page)
    if args.check:
        if made != page:
            print(f"{PAGE}: the options table is stale: python scripts/options_table.py")
            return 1
        return 0
    PAGE.write_text(made, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
