"""The catalogue's digest (results.json ``suite.catalogue_sha256``) changes with what is judged,
and only with that: the matrix calls a column stale, and compare warns, on a changed digest."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.reporting import document
from conformance.requirements import CATALOGUE


def digest_with(monkeypatch: pytest.MonkeyPatch, **changes: str | None) -> str:
    changed = (replace(CATALOGUE[0], **changes), *CATALOGUE[1:])  # type: ignore[arg-type]
    monkeypatch.setattr(document, "CATALOGUE", changed)
    return document.catalogue_sha256()


def test_a_changed_requirement_changes_the_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    before = document.catalogue_sha256()
    assert digest_with(monkeypatch, level="SHOULD") != before
    assert digest_with(monkeypatch, why="another reason") != before


def test_how_a_capability_declaration_is_read_is_not_what_is_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = document.catalogue_sha256()
    assert CATALOGUE[0].capability is None
    assert digest_with(monkeypatch, capability="token_ids") == before
