"""Reading members of a zip archive cut into byte-range parts (conformance.models.split_zip),
on a real zip written by Python's zipfile and cut into 64 KiB parts."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from conformance.models.split_zip import DEFLATED, STORED, Member, SplitArchive

PART_SIZE = 1 << 16
RNG = np.random.default_rng(0)
# Incompressible bytes, stored; then bytes of a 16-letter alphabet, deflated to about half.
# The stored member first: the deflated one and the directory lie in the last parts alone.
CONTENTS = {
    "thing/stored.bin": (RNG.bytes(300_000), zipfile.ZIP_STORED),
    "thing/deflated.bin": (
        RNG.integers(0, 16, 300_000, dtype=np.uint8).tobytes(),
        zipfile.ZIP_DEFLATED,
    ),
}


def zip_of(members: Mapping[str, tuple[bytes, int]]) -> bytes:
    """A zip archive of ``members`` (name -> (bytes, zipfile compression)), in that order."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, (content, compression) in members.items():
            archive.writestr(zipfile.ZipInfo(name), content, compress_type=compression)
    return buffer.getvalue()


def cut_into_parts(data: bytes, folder: Path, name: str, part_size: int) -> list[Path]:
    """``data`` written as ``folder/name.001``, ``.002`` …, each ``part_size`` bytes but the
    last."""
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    for number, start in enumerate(range(0, len(data), part_size), 1):
        part = folder / f"{name}.{number:03d}"
        part.write_bytes(data[start : start + part_size])
        parts.append(part)
    return parts


@pytest.fixture(scope="module")
def archive() -> bytes:
    return zip_of(CONTENTS)


@pytest.fixture
def parts(archive: bytes, tmp_path: Path) -> list[Path]:
    return cut_into_parts(archive, tmp_path / "parts", "thing.zip", PART_SIZE)


def data_offset(member: Member) -> int:
    """Where ``member``'s data starts in the archive (zipfile writes no extra field)."""
    return member.header_offset + 30 + len(member.name.encode())


def extracted(split: SplitArchive, member: Member, folder: Path) -> bytes:
    target = folder / Path(member.name).name
    split.extract(member, target)
    return target.read_bytes()


def test_every_member_reads_back_from_all_parts(parts: Sequence[Path], tmp_path: Path) -> None:
    """The directory lists every member as written, and each reads back byte-identical,
    across the parts' boundaries, stored and deflated alike."""
    assert len(parts) == 8
    split = SplitArchive(parts, PART_SIZE)
    members = split.members()
    assert list(members) == list(CONTENTS)
    assert [m.method for m in members.values()] == [STORED, DEFLATED]
    for name, (content, _) in CONTENTS.items():
        assert members[name].size == len(content)
        assert extracted(split, members[name], tmp_path) == content


def test_a_member_in_the_last_parts_reads_back_from_those_parts_alone(
    parts: Sequence[Path], tmp_path: Path
) -> None:
    """Given only the parts from the one holding the deflated member's local header on (the
    earlier half of the archive missing), the directory and that member read as from the whole
    archive: the parts at hand are placed at ``first_part * part_size``."""
    whole = SplitArchive(parts, PART_SIZE).members()
    member = whole["thing/deflated.bin"]
    first_part = member.header_offset // PART_SIZE
    assert first_part == 4  # four parts missing, the stored member's first ones among them
    assert whole["thing/stored.bin"].header_offset < first_part * PART_SIZE
    split = SplitArchive(parts[first_part:], PART_SIZE, first_part)
    assert split.members() == whole
    assert extracted(split, member, tmp_path) == CONTENTS["thing/deflated.bin"][0]


def test_a_member_needing_a_missing_part_is_refused(parts: Sequence[Path], tmp_path: Path) -> None:
    """The stored member begins in the missing parts: ValueError, not bytes from elsewhere."""
    split = SplitArchive(parts[4:], PART_SIZE, 4)
    with pytest.raises(ValueError, match="not in the parts at hand"):
        split.extract(split.members()["thing/stored.bin"], tmp_path / "stored.bin")


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("thing/stored.bin", 0.5),
        ("thing/deflated.bin", 0.5),
        ("thing/deflated.bin", 0.0),  # the first block's header: a stream zlib cannot inflate
        ("thing/deflated.bin", 0.999),
    ],
)
def test_a_flipped_byte_in_a_members_data_is_refused(
    archive: bytes, tmp_path: Path, name: str, where: float
) -> None:
    """One byte of the member's data inverted (its directory entry intact): ValueError saying
    it is damaged (CRC-32, size or an undecodable deflate stream), whatever the byte."""
    member = SplitArchive(
        cut_into_parts(archive, tmp_path / "good", "thing.zip", PART_SIZE), PART_SIZE
    ).members()[name]
    damaged = bytearray(archive)
    damaged[data_offset(member) + int(where * (member.compressed_size - 1))] ^= 0xFF
    split = SplitArchive(
        cut_into_parts(bytes(damaged), tmp_path / "bad", "thing.zip", PART_SIZE), PART_SIZE
    )
    assert split.members()[name] == member  # the directory intact: only the data differs
    with pytest.raises(ValueError, match=f"{name}: damaged in the archive"):
        split.extract(member, tmp_path / "out")


@pytest.mark.parametrize("change", [-1, +1])
def test_a_part_of_the_wrong_size_is_refused(parts: Sequence[Path], change: int) -> None:
    """A part before the last one byte short or one byte long (a cut elsewhere, a damaged
    copy) would shift every later offset: the archive is refused at once, naming the part,
    whatever is read from it later."""
    wrong = parts[2]
    content = wrong.read_bytes()
    wrong.write_bytes(content[:-1] if change < 0 else content + b"\0")
    size = PART_SIZE + change
    with pytest.raises(ValueError, match=f"{wrong.name}: {size} bytes, not a part of {PART_SIZE}"):
        SplitArchive(parts, PART_SIZE)


@pytest.mark.parametrize("cut", [1, 10, 100, 1_000])
def test_a_truncated_last_part_has_no_central_directory(parts: Sequence[Path], cut: int) -> None:
    """The last part cut short, inside the end-of-directory record (1 or 10 bytes: its
    signature still there) or before it: ValueError, no guess at the directory."""
    last = parts[-1]
    last.write_bytes(last.read_bytes()[:-cut])
    with pytest.raises(ValueError, match="no zip central directory"):
        SplitArchive(parts, PART_SIZE).members()


def test_the_first_parts_alone_have_no_central_directory(parts: Sequence[Path]) -> None:
    """Only the first half of the parts at hand: their end is no archive's end."""
    with pytest.raises(ValueError, match="no zip central directory"):
        SplitArchive(parts[:4], PART_SIZE).members()
