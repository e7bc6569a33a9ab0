"""report.html rendered by a real browser: headless Chromium screenshots the sample, and runs the
page's filter script under the page's own Content-Security-Policy.

Without Chromium these tests skip, unless EMBEDDING_CONFORMANCE_REQUIRE_BROWSER=1 (CI) makes a
missing browser a failure. EMBEDDING_CONFORMANCE_SCREENSHOT_DIR keeps the PNG for a human look.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.reporting.html import render_html
from conformance.reporting.results import Results
from tests.reporting.sample import sample_document

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TIMEOUT_S = 120


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def chromium_or_skip() -> str:
    chromium = find_chromium()
    if chromium is not None:
        return chromium
    message = "no Chromium found (chromium on PATH or /usr/bin/chromium)"
    if os.environ.get("EMBEDDING_CONFORMANCE_REQUIRE_BROWSER") == "1":
        pytest.fail(
            f"{message}, and EMBEDDING_CONFORMANCE_REQUIRE_BROWSER=1 requires one: install it "
            "with `apt-get install chromium` (Debian/Ubuntu)"
        )
    pytest.skip(message)


def run_chromium(
    tmp_path: Path, page: Path, *action: str, window: str = "1280,2400"
) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on ``page`` (a ``window`` of width,height pixels) with a fresh profile
    and nothing phoning home."""
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    command = [
        chromium_or_skip(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        f"--window-size={window}",
        *action,
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


def sample_page(tmp_path: Path) -> Path:
    page = tmp_path / "report.html"
    page.write_text(render_html(Results.from_json(sample_document())), encoding="utf-8")
    return page


def test_report_renders_in_chromium(tmp_path: Path) -> None:
    png = tmp_path / "report.png"
    done = run_chromium(tmp_path, sample_page(tmp_path), f"--screenshot={png}")
    assert png.exists(), f"no screenshot; chromium exited {done.returncode}:\n{done.stderr[-2000:]}"
    data = png.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 100_000  # a blank 1280x2400 page is ~14 KB, the sample ~400 KB
    keep = os.environ.get("EMBEDDING_CONFORMANCE_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(keep) / "report.png")


def test_report_script_runs_under_its_policy(tmp_path: Path) -> None:
    """The filters start hidden; only the script the policy allows by hash shows them."""
    done = run_chromium(tmp_path, sample_page(tmp_path), "--dump-dom")
    assert '<form id="filters" class="filters">' in done.stdout, done.stderr[-2000:]
    assert "9 of 9 shown" in done.stdout
