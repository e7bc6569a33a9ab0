"""The per-user private folder for runtime files: the reference server's worker socket, the
curl reproducers' body files; and keeping torch's import from leaving a folder behind.

``$XDG_RUNTIME_DIR/embedding-conformance`` when XDG_RUNTIME_DIR is set (an absolute path, as
the XDG base directory spec asks), else ``<temp dir>/embedding-conformance-<uid>``. Created
0700; whether created now or found in place, it is used only when it is a real folder (not a
symlink) owned by this user with no permission for group or others. Imports nothing else of
the project: the server and the client both use it.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

NAME = "embedding-conformance"
IPC = "ipc://"  # ZeroMQ's scheme for an address that is a socket file


def ipc_path(address: str) -> str | None:
    """The socket file of a ZeroMQ ``ipc://`` address (a runtime file, left by ZeroMQ when
    its binder ends); None for an address without one (``tcp://``)."""
    return address.removeprefix(IPC) if address.startswith(IPC) else None


class PrivateDirError(OSError):
    """The private folder is unsafe to use (or cannot be made); the message says why."""


def private_dir() -> Path:
    """The private folder, created if missing; PrivateDirError where it is unsafe."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        path = Path(runtime) / NAME
    else:
        path = Path(tempfile.gettempdir()) / f"{NAME}-{os.getuid()}"
    try:
        path.mkdir(mode=0o700)
        created = True
    except FileExistsError:
        created = False
    except OSError as error:
        raise PrivateDirError(f"cannot create the private folder {path}: {error}") from error
    if created:
        os.chmod(path, 0o700)  # mkdir's mode went through the umask
    check_private(path)
    return path


def check_private(path: Path) -> None:
    """PrivateDirError unless ``path`` is a folder (not a symlink) of ours, mode 0700 or less."""
    try:
        info = os.lstat(path)
    except OSError as error:
        raise PrivateDirError(f"cannot inspect the private folder {path}: {error}") from error
    problem = None
    if stat.S_ISLNK(info.st_mode):
        problem = "it is a symbolic link"
    elif not stat.S_ISDIR(info.st_mode):
        problem = "it is not a folder"
    elif info.st_uid != os.getuid():
        problem = f"it is owned by uid {info.st_uid}, not by this user (uid {os.getuid()})"
    elif stat.S_IMODE(info.st_mode) & 0o077:
        problem = f"its mode is {stat.S_IMODE(info.st_mode):04o}: group or others have access"
    elif stat.S_IMODE(info.st_mode) & 0o700 != 0o700:
        problem = f"its mode is {stat.S_IMODE(info.st_mode):04o}: this user cannot use it"
    if problem is not None:
        raise PrivateDirError(
            f"refusing the private folder {path}: {problem} (expected a folder owned by this "
            "user, mode 0700; remove it, or set XDG_RUNTIME_DIR to a private folder)"
        )


@contextlib.contextmanager
def no_torch_cache_folder() -> Iterator[None]:
    """Around the import of sentence-transformers: importing it (torch._dynamo) makes torch's
    compile-cache folder, ``<temp dir>/torchinductor_<user>``. Nothing here compiles, so a
    folder that was not there before, and is still empty, is removed again."""
    if "TORCHINDUCTOR_CACHE_DIR" in os.environ:  # the user's choice: theirs to keep
        yield
        return
    user = re.sub(r'[\\/:*?"<>|]', "_", getpass.getuser())  # as torch spells the folder
    folder = Path(tempfile.gettempdir()) / f"torchinductor_{user}"
    existed = folder.exists()
    try:
        yield
    finally:
        if not existed:
            with contextlib.suppress(OSError):  # not empty, or gone: leave it
                folder.rmdir()
