"""The curl reproducer: URL and body survive the shell; the key is referenced, never printed."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance.client.curl import KEY_VARIABLE, curl_command
from conformance.runtime_dir import private_dir

URL = "http://localhost:8000/v1/embeddings"
BODY: dict[str, Any] = {"model": "m", "input": ["hello", "world"], "encoding_format": "float"}


def data_argument(command: str) -> Any:
    args = shlex.split(command)
    return json.loads(args[args.index("-d") + 1])


def test_command_is_curl_on_the_url() -> None:
    args = shlex.split(curl_command(URL, BODY, with_auth=False))
    assert args[0] == "curl"
    assert URL in args
    assert "Content-Type: application/json" in args


def test_url_with_a_query_string_survives_the_shell() -> None:
    url = "http://h:8000/v1/embeddings?api-version=2024-01-01&x=1"
    args = shlex.split(curl_command(url, BODY, with_auth=False))
    assert url in args


def test_body_round_trips_through_the_shell() -> None:
    assert data_argument(curl_command(URL, BODY, with_auth=False)) == BODY


@pytest.mark.parametrize(
    "text",
    [
        "it's a 'quoted' text",
        "unicode: héllo wörld 你好 🙂",
        "line one\nline two\r\n\ttabbed",
        'shell $HOME `id` $(id) \\ "double" ; && |',
    ],
)
def test_awkward_text_round_trips_through_the_shell(text: str) -> None:
    body = {"model": "m", "input": text}
    assert data_argument(curl_command(URL, body, with_auth=False)) == body


def test_invisible_characters_are_escaped_in_the_command() -> None:
    """A BOM, zero-width characters, a soft hyphen or DEL would be lost on the way from a
    terminal or a report to the shell: the command holds their escapes, for the same body."""
    body = {
        "model": "m",
        "input": ["\ufeffbom", "zero\u200bwidth\u200djoin", "soft\u00adhy", "d\x7f"],
    }
    command = curl_command(URL, body, with_auth=False)
    assert command.isprintable()
    for escape in ("\\ufeff", "\\u200b", "\\u200d", "\\u00ad", "\\u007f"):
        assert escape in command
    assert data_argument(command) == body
    assert "héllo" in curl_command(URL, {"input": "héllo"}, with_auth=False)  # printable: kept


def test_no_authorization_without_auth() -> None:
    command = curl_command(URL, BODY, with_auth=False)
    assert KEY_VARIABLE not in command
    assert "Authorization" not in command


def test_authorization_references_the_key_variable() -> None:
    command = curl_command(URL, BODY, with_auth=True)
    args = shlex.split(command)
    assert KEY_VARIABLE == "EMBEDDINGS_API_KEY"
    assert "Authorization: Bearer $EMBEDDINGS_API_KEY" in args
    # double quotes, so the shell expands the variable (single quotes would not)
    assert '"Authorization: Bearer $EMBEDDINGS_API_KEY"' in command
    assert data_argument(command) == BODY


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_shell_expands_the_key_variable_and_nothing_else() -> None:
    body = {"model": "m", "input": "cost $5 'now'"}
    command = curl_command(URL, body, with_auth=True)
    printed = command.replace("curl", "printf '%s\\n'", 1)
    env = {**os.environ, KEY_VARIABLE: "secret-from-env"}
    out = subprocess.run(
        ["sh", "-c", printed], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert "Authorization: Bearer secret-from-env" in out
    assert json.loads(out[out.index("-d") + 1]) == body


def saved_body(command: str) -> Path:
    args = shlex.split(command)
    assert "-d" not in args
    return Path(args[args.index("--data-binary") + 1].removeprefix("@"))


def test_a_long_body_goes_to_a_file_and_the_command_stays_short(tmp_path: Path) -> None:
    body = {"model": "m", "input": ["the same words"] * 2049}
    command = curl_command(URL, body, with_auth=False, bodies=tmp_path)
    assert len(command) < 300
    path = saved_body(command)
    assert path.parent == tmp_path and json.loads(path.read_bytes()) == body
    again = curl_command(URL, body, with_auth=False, bodies=tmp_path)
    assert again == command and len(list(tmp_path.iterdir())) == 1  # one file per body
    short = curl_command(URL, BODY, with_auth=False, bodies=tmp_path)
    assert data_argument(short) == BODY  # short bodies stay inline


def test_a_long_malformed_body_is_saved_byte_for_byte(tmp_path: Path) -> None:
    raw = b'{"model": "m", "input": "' + b"\xff\xfe not utf-8 \n\r" * 400
    assert saved_body(curl_command(URL, raw, with_auth=False, bodies=tmp_path)).read_bytes() == raw


def test_where_no_file_can_be_written_the_body_stays_inline(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    body = {"model": "m", "input": ["x"] * 2049}
    assert data_argument(curl_command(URL, body, with_auth=False, bodies=blocked / "sub")) == body


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_saved_reproducer_runs_against_a_real_server(clean_server: str, tmp_path: Path) -> None:
    body = {"model": "all-MiniLM-L6-v2", "input": [f"sentence {i}" for i in range(400)]}
    command = curl_command(f"{clean_server}/v1/embeddings", body, with_auth=False, bodies=tmp_path)
    saved_body(command)  # it did go to a file
    out = subprocess.run(["sh", "-c", command], capture_output=True, check=True, timeout=120)
    assert len(json.loads(out.stdout)["data"]) == 400


def body_file_name(body: Any) -> str:
    """The name curl_command gives the file of a (JSON, ASCII) body."""
    exact = json.dumps(body, ensure_ascii=False).encode()
    return f"{hashlib.sha256(exact).hexdigest()[:20]}.body"


def test_a_pre_placed_file_with_other_bytes_is_not_used(tmp_path: Path) -> None:
    body = {"model": "m", "input": ["the real request"] * 2049}
    planted = tmp_path / body_file_name(body)
    planted.write_text('{"model": "m", "input": "something else entirely"}')
    path = saved_body(curl_command(URL, body, with_auth=False, bodies=tmp_path))
    assert path == planted and json.loads(path.read_bytes()) == body  # written anew
    assert [p.name for p in tmp_path.iterdir()] == [planted.name]  # no staging file left


def test_a_pre_placed_symlink_is_replaced_not_followed(tmp_path: Path) -> None:
    body = {"model": "m", "input": ["x"] * 2049}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(json.dumps(body).encode())  # even one holding the right bytes
    folder = tmp_path / "bodies"
    folder.mkdir()
    (folder / body_file_name(body)).symlink_to(elsewhere)
    path = saved_body(curl_command(URL, body, with_auth=False, bodies=folder))
    assert not path.is_symlink() and json.loads(path.read_bytes()) == body
    assert elsewhere.read_bytes() == json.dumps(body).encode()  # the link's target untouched


def test_bodies_go_to_the_private_folder_by_default() -> None:
    body = {"model": "m", "input": ["by default"] * 2049}
    path = saved_body(curl_command(URL, body, with_auth=False))
    folder = private_dir() / "bodies"
    assert path.parent == folder and json.loads(path.read_bytes()) == body
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    path.unlink()


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_a_reproducer_does_not_send_a_pre_placed_different_body(
    clean_server: str, tmp_path: Path
) -> None:
    body = {"model": "all-MiniLM-L6-v2", "input": [f"sentence {i}" for i in range(300)]}
    (tmp_path / body_file_name(body)).write_text('{"model": "all-MiniLM-L6-v2", "input": "one"}')
    command = curl_command(f"{clean_server}/v1/embeddings", body, with_auth=False, bodies=tmp_path)
    out = subprocess.run(["sh", "-c", command], capture_output=True, check=True, timeout=120)
    assert len(json.loads(out.stdout)["data"]) == 300  # the request's own body, not the planted one
