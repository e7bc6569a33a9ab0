"""Where Hypothesis keeps its files during a run: a folder of the run's own, removed at its end.

The suite's generated requests ask Hypothesis for no example database (``database=None``), but
Hypothesis still writes caches (the constants of the code it runs, Unicode tables) under
``./.hypothesis``: in the user's working folder, which a run must leave as it found it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis.configuration import set_hypothesis_home_dir

from conformance.runtime_dir import private_dir


def take_home() -> Path:
    """A fresh folder in the private runtime folder, Hypothesis's home from now on."""
    home = Path(tempfile.mkdtemp(prefix="hypothesis-", dir=private_dir()))
    set_hypothesis_home_dir(home)
    return home


def leave_home(home: Path) -> None:
    set_hypothesis_home_dir(None)
    shutil.rmtree(home, ignore_errors=True)
