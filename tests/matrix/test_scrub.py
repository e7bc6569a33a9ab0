"""No published file names the build machine: a run's results, scrubbed by the build, hold no
path of its home, cache, temp folders, virtual environments, model folder or checkout, stay
sealed, and render a report.html without them; and the published folder itself holds none."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from conformance.matrix import build, scrub
from conformance.references import golden_root
from conformance.reporting import integrity
from conformance.reporting.results import Results

PUBLISHED = Path(__file__).resolve().parents[2] / "docs" / "compatibility"
SOURCE = PUBLISHED / "reference-base64" / "results.json"
GOLDEN = "all-MiniLM-L6-v2/sentence-transformers"


def results_with_machine_paths(cache: Path, model: Path) -> dict[str, object]:
    """A results document with a path of each kind the build machine leaves in one."""
    document = json.loads(SOURCE.read_text())
    temp = tempfile.gettempdir()
    document["endpoint"]["options"]["report_dir"] = f"{temp}/ec-matrix-x1y2/reports"
    document["reference"]["spec"] = f"golden:{golden_root()}/{GOLDEN}"
    document["reference"]["description"] = f"golden {golden_root()}/{GOLDEN}"
    traceback = (
        f'File "{cache}/envs/fastchat/lib/python3.12/site-packages/fastapi/routing.py", '
        'line 3; File "/opt/conda/envs/x/lib/python3.10/site-packages/pydantic/main.py"; '
        'File "/usr/lib/python3.12/asyncio/runners.py"; '
        f"model {model.resolve()}/config.json; served {model}; python {sys.executable}"
    )
    document["requirements"][0]["failures"] = [
        {
            "test": "test_x.py::test_y",
            "detail": "a traceback",
            "response": f"HTTP 500 text/plain: {traceback}",
            "reproducer": f"curl -sS http://127.0.0.1:1/v1/embeddings --data-binary "
            f"@{temp}/embedding-conformance-0/bodies/abc.body",
        }
    ]
    document["requirements"][0]["notes"] = [f"home {Path.home()}/.cache/huggingface"]
    return integrity.seal(document)


@pytest.fixture
def machine(tmp_path: Path) -> tuple[Path, Path]:
    """The peers' cache and the model link in it, as the build makes them."""
    cache = tmp_path / "cache"
    model = cache / "model" / "all-MiniLM-L6-v2"
    model.parent.mkdir(parents=True)
    (tmp_path / "real-model").mkdir()
    model.symlink_to(tmp_path / "real-model")
    return cache, model


def test_the_machine_paths_are_found_before_the_scrub(machine: tuple[Path, Path]) -> None:
    found = scrub.machine_paths(json.dumps(results_with_machine_paths(*machine)))
    assert any("site-packages" in path for path in found), found
    assert any(path.startswith("golden:/") for path in found), found
    assert any(path.startswith("/usr/lib/python3.12") for path in found), found


def test_a_scrubbed_run_holds_no_machine_path_and_stays_sealed(
    machine: tuple[Path, Path],
) -> None:
    cache, model = machine
    document = scrub.scrub_results(
        results_with_machine_paths(cache, model), scrub.scrubber(model, cache)
    )
    text = json.dumps(document)
    assert scrub.machine_paths(text) == []
    assert str(cache) not in text and str(Path.home()) + "/" not in text
    assert integrity.verify(document).ok
    assert document["reference"]["spec"] == f"golden:{GOLDEN}"  # named as --reference names it
    assert document["endpoint"]["options"]["report_dir"] == "<tmp>/ec-matrix-x1y2/reports"
    failure = document["requirements"][0]["failures"][0]
    assert '"<packages>/fastapi/routing.py"' in failure["response"]
    assert '"<packages>/pydantic/main.py"' in failure["response"]
    assert '"<stdlib>/asyncio/runners.py"' in failure["response"]
    assert "model <model>/config.json; served <model>; python <python>" in failure["response"]
    assert failure["reproducer"].endswith("@<tmp>/embedding-conformance-0/bodies/abc.body")


def test_the_build_publishes_the_scrubbed_run(tmp_path: Path, machine: tuple[Path, Path]) -> None:
    cache, model = machine
    results = tmp_path / "reports" / "results.json"
    results.parent.mkdir()
    results.write_text(json.dumps(results_with_machine_paths(cache, model)))
    outcome = build.Outcome("peer", "Peer", "https://example.org", "", "p")
    build.keep_reports(results, tmp_path / "out", outcome, scrub.scrubber(model, cache))
    assert scrub.machine_paths_in((tmp_path / "out").iterdir()) == {}
    published = json.loads((tmp_path / "out" / "results.json").read_text())
    assert integrity.verify(published).ok
    assert f"golden:{GOLDEN}" in (tmp_path / "out" / "report.html").read_text()
    assert Results.from_json(published).verdict == outcome.verdict


@pytest.mark.parametrize(
    "text",
    [
        "</option></var></usr>",  # HTML, not paths
        "https://github.com/home/tmp/usr and file names like a/tmp/b",  # not absolute
        "<packages>/fastapi/routing.py, <stdlib>/asyncio, ~/x, <tmp>/a, golden:all-MiniLM-L6-v2",
    ],
)
def test_what_is_not_a_machine_path(text: str) -> None:
    assert scrub.machine_paths(text) == []


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('File "/root/.cache/x/y.py"', "/root/.cache/x/y.py"),
        ("@/tmp/embedding-conformance/bodies/a.body", "/tmp/embedding-conformance/bodies/a.body"),
        ("in /srv/app/.venv/lib", "/srv/app/.venv/"),
        ("golden:/work/main/golden/m/s", "golden:/work/main/golden/m/s"),
        ("&quot;/home/me/x&quot;", "/home/me/x&quot"),
    ],
)
def test_what_is_a_machine_path(text: str, path: str) -> None:
    assert scrub.machine_paths(text) == [path]


def published_files() -> list[Path]:
    return sorted(p for p in PUBLISHED.rglob("*") if p.suffix in (".json", ".html", ".md", ".toml"))


def test_no_published_file_names_the_build_machine() -> None:
    checkout = str(PUBLISHED.parents[1])  # this clone's path, wherever it is
    found = scrub.machine_paths_in(published_files())
    assert found == {}
    assert [p for p in published_files() if checkout in p.read_text(encoding="utf-8")] == []
