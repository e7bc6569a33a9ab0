"""Which requirements a run judges, and so which of the suite's tests it keeps."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from conformance.options import selects
from conformance.requirements import BY_ID, GATE_PREFIX, Requirement, in_profile
from conformance.run.settings import Settings
from conformance.verdicts.tally import REQUIREMENTS_KEY


def in_play(settings: Settings, requirement: Requirement) -> bool:
    """In the chosen profile, and for the baseline gate's requirements, given a baseline."""
    if requirement.id.startswith(GATE_PREFIX) and not settings.baseline:
        return False
    return in_profile(requirement, settings.profile)


def chosen(settings: Settings, requirement_id: str) -> bool:
    """Named by --requirements (every requirement when it is not given)."""
    patterns = settings.requirements
    return patterns is None or any(selects(p, requirement_id) for p in patterns)


def select(
    settings: Settings, items: Sequence[pytest.Item]
) -> tuple[list[pytest.Item], list[pytest.Item], int]:
    """(selected, deselected, out of play): each test tagged with its requirement ids, and kept
    when one of them is in play and chosen; out of play counts the deselected tests none of
    whose requirements is in play (the baseline gate's without --baseline). An unknown id is a
    usage error."""
    selected: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    out_of_play = 0
    for item in items:
        ids = [i for marker in item.iter_markers("requirement") for i in marker.args]
        unknown = [i for i in ids if i not in BY_ID]
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: unknown requirement id(s) {unknown}")
        item.user_properties.append((REQUIREMENTS_KEY, ids))
        playing = [i for i in ids if in_play(settings, BY_ID[i])]
        in_scope = not ids or any(chosen(settings, i) for i in playing)
        (selected if in_scope else deselected).append(item)
        out_of_play += bool(ids) and not playing
    return selected, deselected, out_of_play
