"""docs/clients.md, made from the client profiles (conformance/client_profiles/*.toml), so that
what the page says a client sends or reads cannot drift from the profile read from its source.

    python scripts/client_profiles_page.py           rewrite docs/clients.md
    python scripts/client_profiles_page.py --check   exit 1 if the page is not what this makes
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.client_profiles import Profile, profiles

PAGE = Path(__file__).resolve().parents[1] / "docs" / "clients.md"
PROFILES = "../conformance/client_profiles"  # from docs/

INTRO = """# What clients send and read

How each client people point at embedding servers talks to `/v1/embeddings` with its
defaults, as its own source says. One profile per client, in
[the profiles folder]({profiles}), holds every claim with the file and lines (or the page) it
was read from. This page is made from those files (`python scripts/client_profiles_page.py`);
the project's tests fail when it differs.

| client | version read | body beyond model and input | inputs a request | timeout | rows read |
|---|---|---|---|---|---|
"""


def _body(defaults: Mapping[str, Any]) -> str:
    return ", ".join(f"`{key}: {value!r}`" for key, value in defaults.items()) or "nothing"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")  # one line; a pipe would end the cell


def row(profile: Profile) -> str:
    timeout = "none" if profile.timeout_s is None else f"{profile.timeout_s:g} s"
    batch = profile.request.get("max_inputs_per_request", "as given")
    read = profile.answer["order"]
    order = "in listed order" if "listed" in read else "by index" if "sorted by" in read else "—"
    cells = (
        f"[{profile.title}]({PROFILES}/{profile.name}.toml)",
        profile.version,
        _body(profile.default_body),
        str(batch),
        timeout,
        order,
    )
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def section(profile: Profile) -> str:
    request, answer = profile.request, profile.answer
    retries = request.get("retries", {})
    retried = retries.get("max", "—") if isinstance(retries, Mapping) else retries
    after = retries.get("retry_after") if isinstance(retries, Mapping) else None
    lines = [
        f"## {profile.title}",
        "",
        f"Read at {profile.package} {profile.version}; the call profiled:",
        "",
        "```",
        profile.call,
        "```",
        "",
        f"- **Sends** {request['method']} `{request['path']}`, {request['content_type']}; "
        f"by default also {_body(profile.default_body)}.",
        f"- **Input forms passed on:** {', '.join(request['input_forms'])}.",
        f"- **Before sending:** {_cell(str(request.get('transforms', 'nothing')))}",
        f"- **Retries:** {retried}" + (f"; Retry-After {_cell(str(after))}" if after else ""),
        f"- **Reads:** {', '.join(f'`{field}`' for field in answer['reads'])}.",
        f"- **Order of rows:** {_cell(answer['order'])}",
        f"- **Base64:** {_cell(answer['decodes_base64'])}",
    ]
    if answer.get("requires"):
        requires = answer["requires"]
        text = "; ".join(requires) if isinstance(requires, list) else str(requires)
        lines.append(f"- **Fails on:** {_cell(text)}")
    if "version_note" in profile.notes:
        lines.append(f"- **Version:** {_cell(profile.notes['version_note'])}")
    lines.append(f"- Read from {len(profile.sources)} places in its source and documentation.")
    return "\n".join(lines)


def page() -> str:
    found = profiles()
    parts = [INTRO.format(profiles=PROFILES) + "\n".join(row(p) for p in found)]
    parts += [section(p) for p in found]
    return "\n\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page differs")
    args = parser.parse_args(argv)
    made = page()
    if args.check:
        if PAGE.read_text(encoding="utf-8") != made:
            print(f"{PAGE} is not what the profiles make: run {sys.argv[0]}", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(made, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
