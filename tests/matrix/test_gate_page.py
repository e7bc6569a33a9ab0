"""gate.md, the upgrade gate's page, escapes what the servers said: a detail, a version in a
label and a regression line are the servers' text, hostile until escaped."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.matrix import gate
from tests.reporting.test_compare import document, requirement, write

HOSTILE = "<script>x</script> | *bold* [link](http://e)\nnext"


def test_the_gate_page_escapes_what_the_servers_said(tmp_path: Path) -> None:
    first = gate.GATE_REQUIREMENTS[0]
    failing = requirement(first, "FAIL")
    failing["failures"] = [{"test": "t", "detail": HOSTILE, "response": None, "reproducer": None}]
    after = document([failing])
    after["baseline"] = {"regressions": [HOSTILE]}
    write(tmp_path, "before", document([requirement(first)]))
    write(tmp_path, "after", after)
    page = gate.render(tmp_path, ("old <b>1</b>", "new | 2"), 1)
    assert page.startswith("# Upgrade gate: old &lt;b&gt;1&lt;/b&gt; → new \\| 2\n")
    assert f"- `{first}` FAIL: &lt;script&gt;x&lt;/script&gt; \\| \\*bold\\*" in page
    assert "- REGRESSION &lt;script&gt;" in page
    assert "<script>" not in page and not re.search(r"(?<!\\)\]\(http", page)  # no link
    assert "Verdict: **FAILED**" in page
