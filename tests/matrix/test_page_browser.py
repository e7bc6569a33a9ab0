"""The matrix page in a real browser as columns grow: 24 columns in a 1,400 x 900 window keep
their requirement names and column heads in view while the grid scrolls, and the peer table
with its report links fits the window.

The page forbids scripts; the test measures a copy of it whose policy admits the one script it
adds (by hash), which scrolls the grid and writes what it measured into the page for
``--dump-dom``. Chromium is found, or its absence handled, as for report.html.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from conformance.matrix import publish
from tests.matrix.synthetic import DIGEST, judged, peer, write_matrix
from tests.reporting.test_report_browser import PNG_SIGNATURE, run_chromium

COLUMNS = 24
WINDOW = (1400, 900)

# Scroll the page to the grid, the grid to its far right and half way down (then measure).
SCROLL = """
const grid = document.querySelector('.grid');
grid.scrollIntoView();
grid.scrollLeft = grid.scrollWidth;
grid.scrollTop = (grid.scrollHeight - grid.clientHeight) / 2;
"""
# Headless Chromium's --screenshot shows the top of the page whatever the script scrolled to:
# the screenshot's copy moves the grid up there instead of scrolling the window.
SHOW = SCROLL.replace("grid.scrollIntoView();", "document.body.prepend(grid);")
MEASURE = (
    SCROLL
    + """
const width = document.documentElement.clientWidth, height = window.innerHeight;
const box = grid.getBoundingClientRect();
const rect = (cell) => cell.getBoundingClientRect();
const within = (r) => r.left >= 0 && r.right <= width + 0.5
  && r.top >= 0 && r.bottom <= height + 0.5;
// the rows and columns the grid shows whole; their names must be in view, at the grid's edge
const rowShown = (c) => rect(c).top >= box.top && rect(c).bottom <= box.bottom;
const columnShown = (c) => rect(c).left >= box.left && rect(c).right <= box.right;
const names = [...grid.querySelectorAll('tbody th.req')].filter(rowShown);
const heads = [...grid.querySelectorAll('thead th')];
const text = (c) => c.textContent;
const out = {
  width, height, window: window.innerWidth,
  scrolled: [grid.scrollLeft, grid.scrollTop],
  overflow: [grid.scrollWidth - grid.clientWidth, grid.scrollHeight - grid.clientHeight],
  names: names.length,
  namesOut: names.filter((c) => !within(rect(c)) || rect(c).left > box.left + 1).map(text),
  heads: heads.filter(columnShown).length,
  headsOut: heads.filter(columnShown).filter((c) => !within(rect(c))).map(text),
  cornerIn: within(rect(heads[0])),
  lastHeadIn: within(rect(heads[heads.length - 1])),
  headTop: rect(heads[0]).top - box.top,
  pageWidth: document.documentElement.scrollWidth,
};
window.scrollTo(0, 0);
const links = [...document.querySelectorAll('table.peers a')];
out.links = links.length;
out.linksOut = links.filter((a) => rect(a).right > width).map((a) => a.getAttribute('href'));
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify(out);
document.body.prepend(pre);
"""
)


def wide_matrix(folder: Path) -> Path:
    peers = [peer(f"peer-{n:02d}", judged()) for n in range(COLUMNS)]
    write_matrix(folder, peers, {"peer-03": ["base64.honoured"]})
    (folder / "index.html").write_text(publish.render_pages(folder, DIGEST)["index.html"])
    return folder / "index.html"


def measurable(page: Path, script: str = MEASURE) -> Path:
    """A copy of ``page`` that runs ``script``, its policy admitting that script alone."""
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    text = page.read_text(encoding="utf-8")
    text = text.replace("default-src 'none';", f"default-src 'none'; script-src 'sha256-{digest}';")
    copy = page.with_name("measured.html")
    copy.write_text(text.replace("</body>", f"<script>{script}</script></body>"), "utf-8")
    return copy


def measure(tmp_path: Path, page: Path) -> dict[str, Any]:
    window = f"{WINDOW[0]},{WINDOW[1]}"
    done = run_chromium(tmp_path, measurable(page), "--dump-dom", window=window)
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, re.DOTALL)
    assert found, f"nothing measured; chromium exited {done.returncode}:\n{done.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return result


def test_wide_grid_keeps_its_names_and_heads_in_view(tmp_path: Path) -> None:
    m = measure(tmp_path, wide_matrix(tmp_path / "matrix"))
    assert m["window"] == WINDOW[0], m  # the window the test means
    assert m["overflow"][0] > 0 and m["overflow"][1] > 0, m  # 24 columns do not fit: it scrolls
    assert m["scrolled"][0] > 0 and m["scrolled"][1] > 0, m
    assert m["names"] > 10 and m["namesOut"] == [], m  # the requirement names stayed put
    assert m["heads"] > 5 and m["headsOut"] == [], m  # and the heads of the columns shown
    assert m["cornerIn"] and m["lastHeadIn"], m
    assert abs(m["headTop"]) < 2, m  # the head row sits at the top of the scrolled grid
    assert m["pageWidth"] <= m["width"], m  # the page itself does not scroll sideways


def test_peer_table_links_fit_the_window(tmp_path: Path) -> None:
    m = measure(tmp_path, wide_matrix(tmp_path / "matrix"))
    assert m["links"] == 2 * COLUMNS, m  # each peer's homepage and report
    assert m["linksOut"] == [], m


def test_wide_matrix_screenshot(tmp_path: Path) -> None:
    """The grid scrolled right and down, for a human look (EMBEDDING_CONFORMANCE_SCREENSHOT_DIR)."""
    page = measurable(wide_matrix(tmp_path / "matrix"), SHOW)
    png = tmp_path / "matrix.png"
    window = f"{WINDOW[0]},{WINDOW[1]}"
    done = run_chromium(tmp_path, page, f"--screenshot={png}", window=window)
    assert png.exists(), f"no screenshot; chromium exited {done.returncode}:\n{done.stderr[-2000:]}"
    data = png.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 40_000  # not blank: a white 1400x900 page is a few KB
    keep = os.environ.get("EMBEDDING_CONFORMANCE_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(keep) / "matrix.png")
