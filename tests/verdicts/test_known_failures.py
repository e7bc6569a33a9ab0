"""--known-failures and --capabilities files: read strictly, applied to the verdicts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.verdicts.capabilities import (
    MEASURED_BY,
    claims,
    judge_capabilities,
    load_capabilities,
)
from conformance.verdicts.known_failures import (
    KnownFailure,
    apply_known_failures,
    covering,
    load_known_failures,
)
from conformance.verdicts.tally import CHECK_KEY, REQUIREMENTS_KEY, Tally


def toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "file.toml"
    path.write_text(text)
    return path


def test_entries_are_read_with_their_reason_link_and_case(tmp_path: Path) -> None:
    path = toml(
        tmp_path,
        '[[known-failure]]\nrequirement = "reference.agreement"\nreason = "r"\n'
        'link = "https://x"\ncase = "ctx-past-257"\n',
    )
    assert load_known_failures(path) == (
        KnownFailure("reference.agreement", "r", "https://x", "ctx-past-257"),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[known-failure]]\nrequirement = "no.such"\nreason = "r"\n', "unknown requirement"),
        (
            '[[known-failure]]\nrequirement = "reference.agreement"\nreason = "r"\ncase = "zz"\n',
            "unknown case 'zz'",
        ),
        ('[[known-failure]]\nrequirement = "reference.agreement"\n', "a reason is required"),
        (
            '[[known-failure]]\nrequirement = "reference.agreement"\nreason = "r"\nwhy = 1\n',
            "unknown key(s) why",
        ),
        ("[known]\nx = 1\n", "expected only [[known-failure]] tables"),
        ("not toml [", "not a readable TOML file"),
    ],
)
def test_a_bad_entry_is_an_error_naming_it(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        load_known_failures(toml(tmp_path, text))


def failing(requirement: str, case: str | None) -> list[tuple[str, object]]:
    check = {
        "requirement": requirement,
        "passed": False,
        "measured": 1.0,
        "limit": "<= 0",
        "margin": -1.0,
        "detail": "bad",
        "index": 0,
        "case": case,
    }
    return [(REQUIREMENTS_KEY, [requirement]), (CHECK_KEY, check)]


def test_a_listed_failure_is_xfail_a_passing_one_stale_an_unlisted_case_stays_failed() -> None:
    tally = Tally()
    tally.add("t::norm", failing("normalization.unit-norm", None), "failed")
    tally.add("t::agree", failing("reference.agreement", "en-sent-01"), "failed")
    tally.add("t::list", [(REQUIREMENTS_KEY, ["envelope.object-list"])], "passed")
    entries = (
        KnownFailure("normalization.unit-norm", "raw states"),
        KnownFailure("reference.agreement", "one case", case="en-sent-02"),  # another case
        KnownFailure("envelope.object-list", "fixed since"),
    )
    apply_known_failures(tally, entries)
    statuses = {k: v.status for k, v in tally.verdicts.items() if v.status != "NOT RUN"}
    assert statuses == {
        "normalization.unit-norm": "XFAIL",
        "reference.agreement": "FAIL",
        "envelope.object-list": "STALE",
    }
    assert tally.counts()["xfail"] == 1 and tally.counts()["stale"] == 1
    assert covering(entries, [("reference.agreement", "en-sent-02")]) == entries[1]
    assert covering(entries, [("reference.agreement", "en-sent-01")]) is None


def test_capabilities_are_read_strictly(tmp_path: Path) -> None:
    path = toml(tmp_path, "[capabilities]\ntoken_ids = true\nmax_batch = 2048\n")
    assert load_capabilities(path) == {"token_ids": True, "max_batch": 2048}
    for text, message in [
        ("[capabilities]\ntokens = true\n", "unknown capability 'tokens'"),
        ("[capabilities]\ndimensions = 1\n", "dimensions must be a bool"),
        ("[capabilities]\nmax_batch = 0\n", "max_batch must be a int"),
        ("[capabilities]\nbase64 = false\n", "cannot be declared away"),
    ]:
        with pytest.raises(ValueError, match=message):
            load_capabilities(toml(tmp_path, text))


def test_each_capability_is_measured_by_the_requirements_the_catalogue_names() -> None:
    assert MEASURED_BY == {
        "token_ids": ("input.token-ids", "input.token-id-arrays", "reference.token-ids"),
        "dimensions": ("dimensions.honoured", "dimensions.renormalized"),
        "base64": (
            "base64.honoured",
            "base64.decodes",
            "base64.float-parity",
            "base64.openai-client",
        ),
        "normalized": ("normalization.unit-norm",),
        "max_batch": ("batch.large",),
        "max_tokens": (),  # recorded with the run; the suite reads the context from the server
    }
    assert claims({"token_ids": True}, "envelope.object-list") is None  # no capability's


def test_a_capability_is_promised_only_when_declared() -> None:
    assert claims({"token_ids": True}, "input.token-ids") == "token_ids"
    assert claims({"token_ids": False}, "input.token-ids") is None
    assert claims({"max_batch": 64}, "batch.large") is None  # batch.large sends 128
    assert claims({"max_batch": 256}, "batch.large") == "max_batch"


def test_served_but_undeclared_is_noted() -> None:
    tally = Tally()
    tally.add("t::dims", [(REQUIREMENTS_KEY, ["dimensions.honoured"])], "passed")
    judge_capabilities(tally, {"token_ids": True})
    capability = tally.verdicts["dimensions.honoured"].capability
    assert capability is not None and capability.to_json() == {
        "name": "dimensions",
        "declared": False,
        "judgement": "served, but not declared",
    }
    assert (
        "dimensions is served, but not declared" in tally.verdicts["dimensions.honoured"].notes[0]
    )
