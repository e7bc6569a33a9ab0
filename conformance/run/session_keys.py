"""Where a pytest run keeps its conformance session, apart from the session itself.

The plugin's hooks run in every pytest run of an environment where the package is installed;
they ask here whether the run has a session without importing the session's module (and, through
it, the client, the checks, the references and the reporting).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conformance.run.session import ConformanceSession

SETTINGS_KEY = "conformance_settings"  # in xdist's workerinput: the controller's settings
CANARY_KEY = "conformance_canary"  # and the state canary's first answer (conformance.run.canary)
SESSION_KEY = pytest.StashKey["ConformanceSession"]()


def session_of(config: pytest.Config) -> ConformanceSession | None:
    """The run's session; None when this run tests no endpoint."""
    return config.stash.get(SESSION_KEY, None)


def has_worker_settings(config: pytest.Config) -> bool:
    """An xdist worker to which the controller handed its resolved settings."""
    return SETTINGS_KEY in getattr(config, "workerinput", {})
