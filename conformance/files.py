"""Writing files and folders so that nothing is ever half-written: build beside, then rename
into place."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def staging_dir(target: Path) -> Path:
    """A fresh hidden folder beside ``target`` (same file system, so a rename moves it into
    place at once), with the permissions ``mkdir`` would give: mkdtemp's are owner-only."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    staging.chmod(0o777 & ~_umask())
    return staging


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def write_text_atomically(path: Path, text: str) -> None:
    """Write to a temporary file beside ``path``, then rename: readers never see half a file.
    The file gets the permissions ``open`` would give (mkstemp's 0600 would hide a report)."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
