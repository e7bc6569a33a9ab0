"""The state of one conformance run, kept in ``config.stash`` by the plugin."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from conformance.client import EmbeddingsClient
from conformance.options import Settings
from conformance.reporting.tally import Tally


@dataclass
class ConformanceRun:
    settings: Settings
    tally: Tally = field(default_factory=Tally)
    client: EmbeddingsClient | None = None  # set once the preflight has passed

    @property
    def model(self) -> str | None:
        return self.client.model if self.client else self.settings.model


RUN_KEY = pytest.StashKey[ConformanceRun]()
