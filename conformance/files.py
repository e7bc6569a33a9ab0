"""Writing folders so that nothing is ever half-written: build beside, then rename into place."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def staging_dir(target: Path) -> Path:
    """A fresh hidden folder beside ``target`` (same file system, so a rename moves it into
    place at once), with the permissions ``mkdir`` would give: mkdtemp's are owner-only."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)
    return staging
