"""The client profiles (conformance/client_profiles/*.toml): each packaged one is a profile, a
file that is not one is refused with what is wrong, and docs/clients.md is what they make."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from types import ModuleType

import pytest

from conformance.client_profiles import ECOSYSTEMS, problems, profiles
from tests.support.scripts import load_script

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# the clients issue 58 names: the SDKs, the frameworks' embeddings classes, plain HTTP
CLIENTS = {
    "openai-python",
    "openai-node",
    "openai-java",
    "openai-go",
    "langchain-openai",
    "llama-index-openai",
    "curl",
}


def raw(name: str) -> dict[str, object]:
    text = resources.files("conformance.client_profiles").joinpath(f"{name}.toml").read_text()
    return tomllib.loads(text)


def test_every_client_has_a_profile_read_from_its_source() -> None:
    found = {profile.name: profile for profile in profiles()}
    assert set(found) == CLIENTS
    for profile in found.values():
        assert profile.ecosystem in ECOSYSTEMS
        assert profile.version[0].isdigit(), profile.version  # a release, not "latest"
        assert len(profile.sources) >= 5, profile.name  # each claim with where it was read


def test_what_the_sdks_send_and_read_by_default() -> None:
    """The facts a server is judged by, as read: the SDKs ask for base64 by default (Go asks
    for nothing and reads floats only), and no client sorts rows by their index."""
    found = {profile.name: profile for profile in profiles()}
    for name in ("openai-python", "openai-node", "openai-java"):
        assert found[name].default_body == {"encoding_format": "base64"}, name
    assert found["openai-go"].default_body == {}
    assert found["llama-index-openai"].request["max_inputs_per_request"] == 100
    assert found["langchain-openai"].request["max_inputs_per_request"] == 1000
    assert found["openai-python"].timeout_s == 600 and found["curl"].timeout_s is None
    assert all("listed" in p.answer["order"] for p in found.values() if p.name != "curl")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("version"), "top level: version missing"),
        (lambda d: d["request"].pop("defaults"), "request: defaults missing"),
        (lambda d: d.update(name="other"), "name 'other' is not the file's name 'openai-python'"),
        (lambda d: d.update(ecosystem="cargo"), "ecosystem 'cargo' not one of"),
        (lambda d: d["request"].update(timeout_s="soon"), "neither seconds nor 'none'"),
        (lambda d: d["source"][0].pop("lines"), "source 1: lines missing"),
        (lambda d: d.update(source=[]), "no [[source]]"),
    ],
)
def test_a_file_that_is_not_a_profile_says_what_is_wrong(change: object, message: str) -> None:
    document = raw("openai-python")
    assert problems(document, "openai-python") == []
    change(document)  # type: ignore[operator]
    assert any(message in problem for problem in problems(document, "openai-python"))


def page_script() -> ModuleType:
    return load_script("client_profiles_page")


def test_the_clients_page_is_what_the_profiles_make() -> None:
    """Run scripts/client_profiles_page.py after changing a profile."""
    assert page_script().main(["--check"]) == 0


def test_a_stale_clients_page_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = page_script()
    stale = tmp_path / "clients.md"
    stale.write_text(script.page().replace("600 s", "60 s", 1))
    monkeypatch.setattr(script, "PAGE", stale)
    assert script.main(["--check"]) == 1
