"""The peers file: the shipped one is complete and loopback-only; mistakes fail at load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.matrix import peers

MINIMAL = """
[environment.tool]
install = [["tool==1.0"]]

[[peer]]
name = "tool"
title = "Tool"
package = "tool"
homepage = "https://example.org/tool"
endpoint = "http://127.0.0.1:{port}"
model = "all-MiniLM-L6-v2"

[[peer.process]]
argv = ["{python}", "-m", "tool", "--port", "{port}"]
ready = "http://127.0.0.1:{port}/health"
"""


def load_text(tmp_path: Path, text: str) -> peers.Catalogue:
    path = tmp_path / "peers.toml"
    path.write_text(text)
    return peers.load(path)


def test_the_shipped_peers_load_and_serve_loopback_only() -> None:
    catalogue = peers.load()
    assert len(catalogue.peers) >= 8
    for peer in catalogue.peers:
        assert peer.endpoint.startswith("http://127.0.0.1:")
        for process in peer.processes:
            assert not process.ready or process.ready.startswith("http://127.0.0.1:")
            words = [*process.argv, *process.env.values()]
            assert "0.0.0.0" not in words and "localhost" not in words
            hosts = [words[i + 1] for i, word in enumerate(words) if word == "--host"]
            assert set(hosts) <= {"127.0.0.1"}, peer.name


def test_a_minimal_peer_loads(tmp_path: Path) -> None:
    catalogue = load_text(tmp_path, MINIMAL)
    (peer,) = catalogue.peers
    assert peer.environments == ("tool",)
    assert catalogue.environments["tool"].installs == (("tool==1.0",),)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("{port}/health", "{prot}/health"), "unknown placeholder {prot}"),
        (('endpoint = "http://127.0.0.1', 'endpoint = "http://10.0.0.1'), "not on http://127"),
        (('name = "tool"', 'name = "a/b"'), "letters, digits"),
        (('install = [["tool==1.0"]]', 'install = ["tool==1.0"]'), "expected a list of strings"),
        (('model = "all-MiniLM-L6-v2"\n', ""), "lacks the key 'model'"),
        (("[environment.tool]", "[environment.other]"), "no environment named 'tool'"),
    ],
)
def test_mistakes_fail_at_load(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("/", ".")):
        load_text(tmp_path, MINIMAL.replace(*change))


def test_a_peer_named_twice_fails(tmp_path: Path) -> None:
    twice = MINIMAL + MINIMAL.split("\n[[peer]]", 1)[1].join(["\n[[peer]]", ""])
    with pytest.raises(ValueError, match="peer names appear twice: tool"):
        load_text(tmp_path, twice)


def test_environment_digest_follows_what_is_installed() -> None:
    one = peers.Environment("x", (("a==1",),))
    assert one.digest() == peers.Environment("x", (("a==1",),)).digest()
    assert one.digest() != peers.Environment("x", (("a==2",),)).digest()


def test_commands_may_name_the_packaged_tools(tmp_path: Path) -> None:
    with_tool = MINIMAL.replace('"-m", "tool"', '"{dequantize}", "{envdir}/m.gguf"')
    (peer,) = load_text(tmp_path, with_tool).peers
    assert peer.processes[0].argv[1] == "{dequantize}"


@pytest.mark.parametrize("tool", sorted(peers.TOOLS))
def test_each_tool_runs_by_path_without_the_project(tool: str) -> None:
    """An environment's own Python runs them: with no site-packages (-S) and no arguments,
    each still starts and answers with its usage."""
    script = peers.tool_paths()[tool]
    completed = subprocess.run(
        [sys.executable, "-I", "-S", script], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 1
    assert f"usage: {Path(script).name}" in completed.stderr
