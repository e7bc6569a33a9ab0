"""The per-user private folder for runtime files: made 0700, refused when it is not private."""

from __future__ import annotations

import getpass
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conformance.runtime_dir import PrivateDirError, private_dir


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG_RUNTIME_DIR set to an empty folder: the private folder is its 'embedding-conformance'."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    return tmp_path / "embedding-conformance"


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_made_under_the_xdg_runtime_dir_with_mode_0700(runtime: Path) -> None:
    old = os.umask(0o777)  # mkdir's mode goes through the umask: it must still be 0700
    try:
        assert private_dir() == runtime
    finally:
        os.umask(old)
    assert runtime.is_dir() and not runtime.is_symlink()
    assert mode(runtime) == 0o700 and runtime.stat().st_uid == os.getuid()
    assert private_dir() == runtime  # found in place and private: used again


def test_without_xdg_a_folder_of_this_user_under_the_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert private_dir() == tmp_path / f"embedding-conformance-{os.getuid()}"
    assert mode(private_dir()) == 0o700
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/path")  # invalid per the XDG spec: ignored
    assert private_dir() == tmp_path / f"embedding-conformance-{os.getuid()}"


def test_a_folder_open_to_others_is_refused(runtime: Path) -> None:
    runtime.mkdir()
    runtime.chmod(0o755)
    with pytest.raises(PrivateDirError, match=r"refusing .*embedding-conformance.*mode is 0755"):
        private_dir()
    assert mode(runtime) == 0o755  # reported, not silently changed


def test_a_symlink_is_refused_even_to_a_private_folder(runtime: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    runtime.symlink_to(target)
    with pytest.raises(PrivateDirError, match="symbolic link"):
        private_dir()


def test_a_file_in_its_place_is_refused(runtime: Path) -> None:
    runtime.write_text("not a folder")
    with pytest.raises(PrivateDirError, match="not a folder"):
        private_dir()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_is_refused(runtime: Path) -> None:
    runtime.mkdir(mode=0o700)
    os.chown(runtime, 12345, 12345)
    with pytest.raises(PrivateDirError, match="owned by uid 12345"):
        private_dir()


def test_a_missing_xdg_runtime_dir_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "gone"))
    with pytest.raises(PrivateDirError, match="cannot create the private folder"):
        private_dir()


def test_importing_torch_leaves_no_compile_cache_folder(tmp_path: Path) -> None:
    """torch._dynamo makes <tmp>/torchinductor_<user> on import; a fresh interpreter that
    imports sentence-transformers through no_torch_cache_folder leaves nothing in its temp dir."""
    code = (
        "from conformance.runtime_dir import no_torch_cache_folder\n"
        "with no_torch_cache_folder():\n"
        "    import sentence_transformers\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    subprocess.run([sys.executable, "-c", code], env={**env, "TMPDIR": str(tmp_path)}, check=True)
    assert list(tmp_path.iterdir()) == []
    code = "import sentence_transformers"  # without it: the folder the guard removes
    subprocess.run([sys.executable, "-c", code], env={**env, "TMPDIR": str(tmp_path)}, check=True)
    assert [p.name for p in tmp_path.iterdir()] == [f"torchinductor_{getpass.getuser()}"]
