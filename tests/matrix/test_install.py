"""`matrix install` installs the named peers' environments and starts nothing: a build then
finds them ready; a failed step is named with its log; an unknown peer is a usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main

PEER = """
[environment.{name}]
install = []
after = [["{{python}}", "-c", "{after}"]]

[[peer]]
name = "{name}"
title = "{name}"
package = "{name}"
homepage = "https://example.org"
endpoint = "http://127.0.0.1:{{port}}"
model = "all-MiniLM-L6-v2"

[[peer.process]]
argv = ["{{python}}", "-m", "http.server", "{{port}}"]
ready = "http://127.0.0.1:{{port}}/"
"""


@pytest.fixture
def peers_file(tmp_path: Path) -> Path:
    path = tmp_path / "peers.toml"
    path.write_text(
        PEER.format(name="small", after="print('after step ran')")
        + PEER.format(name="broken", after="raise SystemExit(3)")
    )
    return path


def matrix(
    capsys: pytest.CaptureFixture[str], peers_file: Path, *args: str
) -> tuple[int, str, str]:
    cache = peers_file.parent / "cache"
    code = main(["matrix", *args, "--peers", str(peers_file), "--cache", str(cache)])
    out, err = capsys.readouterr()
    return code, out, err


def test_install_makes_the_environment_a_build_finds_ready(
    peers_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = matrix(capsys, peers_file, "install", "small")
    assert code == 0
    assert "small: installing environment small" in out
    installed = peers_file.parent / "cache" / "small"
    assert "after step ran" in (installed / "logs" / "install.log").read_text()
    assert (installed / "venv" / "bin" / "python").exists()
    listed = matrix(capsys, peers_file, "list")[1]
    assert [line.split(maxsplit=2)[2] for line in listed.splitlines()] == [
        "installed",
        "to install: broken",
    ]
    again = matrix(capsys, peers_file, "install", "small")
    assert again[:2] == (0, "")  # kept as it is: nothing to install


def test_a_failed_install_names_its_step_and_log(
    peers_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = matrix(capsys, peers_file, "install", "broken")
    assert code == 1
    assert "exited with 3" in err and "broken/logs/install.log" in err


def test_an_unknown_peer_is_a_usage_error(
    peers_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = matrix(capsys, peers_file, "install", "nosuch")
    assert code == 4
    assert "no peer named 'nosuch'; the peers are: small, broken" in err
