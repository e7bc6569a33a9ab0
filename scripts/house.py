"""The house drawn from the imports: the package's rooms, the arrows between them, its floors.

A room is a top-level module of ``conformance`` or one of its subpackages (whole). An arrow is a
room that imports another, anywhere in its modules (imports inside functions and under
``TYPE_CHECKING`` count: a lazy import is still a dependency). A room's floor is the length of
the longest chain of arrows below it, so a house without cycles has no arrow pointing up.

    python scripts/house.py [--arrows]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "conformance"


def room_of(module: str) -> str:
    """``conformance.run.session`` -> ``run``; the package itself ("") is no room."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "conformance" else ""


def imported(source: str) -> Iterator[str]:
    """Every module name an import statement of ``source`` names (``from a import b``: a and
    a.b, since b may be a module)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def rooms(package: Path = PACKAGE) -> list[str]:
    found = [p.stem for p in package.glob("*.py") if p.stem != "__init__"]
    found += [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    return sorted(found)


def arrows(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Per room, the other rooms it imports."""
    names = set(rooms(package))
    drawn: dict[str, set[str]] = {name: set() for name in names}
    for path in package.rglob("*.py"):
        source_room = path.relative_to(package).parts[0].removesuffix(".py")
        if source_room not in names:
            continue
        targets = {room_of(m) for m in imported(path.read_text(encoding="utf-8"))}
        drawn[source_room] |= (targets & names) - {source_room}
    return drawn


def floors(drawn: Mapping[str, set[str]]) -> dict[str, int]:
    """Each room's floor: 0 imports no room, else one above the highest room it imports.
    A cycle is an error (ValueError naming it): a cycle has no floors."""
    floor: dict[str, int] = {}

    def place(name: str, path: tuple[str, ...]) -> int:
        if name in path:
            raise ValueError("cycle: " + " -> ".join((*path[path.index(name) :], name)))
        if name not in floor:
            floor[name] = 1 + max((place(t, (*path, name)) for t in drawn[name]), default=-1)
        return floor[name]

    for name in drawn:
        place(name, ())
    return floor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arrows", action="store_true", help="also list each room's arrows")
    args = parser.parse_args(argv)
    drawn = arrows()
    try:
        floor = floors(drawn)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 1
    count = sum(len(targets) for targets in drawn.values())
    print(f"{len(drawn)} rooms on {max(floor.values()) + 1} floors with {count} arrows")
    for level in sorted(set(floor.values()), reverse=True):
        print(f"  floor {level}: " + ", ".join(sorted(r for r in drawn if floor[r] == level)))
    if args.arrows:
        for name in sorted(drawn):
            print(f"  {name} -> {', '.join(sorted(drawn[name])) or '(nothing)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
