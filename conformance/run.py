"""The state of one conformance run, kept in ``config.stash`` by the plugin."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from conformance.client import EmbeddingsClient
from conformance.options import Settings
from conformance.references import ReferenceSpec
from conformance.references.baseline import Baseline
from conformance.reporting.tally import Tally
from conformance.requirements import CATALOGUE, GATE_PREFIX, Requirement, in_profile


@dataclass
class ConformanceRun:
    settings: Settings
    tally: Tally = field(init=False)
    client: EmbeddingsClient | None = None  # set once the preflight has passed
    reference: ReferenceSpec | None = None  # set with the client
    baseline: Baseline | None = None  # set with the client, from --baseline
    regressions: list[str] = field(default_factory=list)  # statuses worse than the baseline's

    def __post_init__(self) -> None:
        self.tally = Tally(r for r in CATALOGUE if self.in_play(r))

    def in_play(self, requirement: Requirement) -> bool:
        """In the chosen profile, and for the baseline gate's requirements, given a baseline."""
        if requirement.id.startswith(GATE_PREFIX) and not self.settings.baseline:
            return False
        return in_profile(requirement, self.settings.profile)

    @property
    def model(self) -> str | None:
        return self.client.model if self.client else self.settings.model


RUN_KEY = pytest.StashKey[ConformanceRun]()
