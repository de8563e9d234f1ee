"""Ogg Opus files joined packet by packet: a read's lines, each encoded once (and cached), are
muxed into one stream, so a re-read encodes only the lines that changed.

Invariant: the joined file is one ordinary Ogg Opus stream (RFC 7845: the first piece's
headers, every piece's audio packets in order, pages with true granule positions and CRCs), so
any player reads it; each piece keeps its encoder's priming, so a line starts `pre-skip`
samples into its slot, and `join` says exactly where each one starts and how long the whole
lasts. A piece that is not an Ogg Opus file is refused (ValueError). Pure.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

OPUS_RATE = 48_000  # granule positions count 48 kHz samples, whatever the input rate
_PAGE = struct.Struct("<4sBBqIIIB")  # capture, version, type, granule, serial, seq, crc, segments
_BOS, _EOS = 2, 4
_PAGE_BODY = 4096  # packets per page until about this many bytes
_SERIAL = 0x43495243  # "CIRC"


_REVERSED = bytes(int(f"{i:08b}"[::-1], 2) for i in range(256))


def crc(data: bytes) -> int:
    """Ogg's CRC-32 (polynomial 0x04C11DB7, unreflected, initial value 0, no final xor),
    computed by zlib's reflected CRC-32 of the bit-reversed bytes (C speed: a read's pages run
    to megabytes), its own initial and final xor undone and its result bit-reversed."""
    reflected = zlib.crc32(data.translate(_REVERSED), 0xFFFFFFFF) ^ 0xFFFFFFFF
    return int(f"{reflected:032b}"[::-1], 2)


def _pages(data: bytes) -> Iterator[tuple[int, int, list[int], bytes]]:
    """(type, granule, lacing values, body) of each page."""
    at = 0
    while at < len(data):
        if len(data) - at < _PAGE.size:
            raise ValueError("a torn Ogg page")
        capture, _, kind, granule, _, _, _, count = _PAGE.unpack_from(data, at)
        if capture != b"OggS":
            raise ValueError("not an Ogg page")
        lacing = list(data[at + _PAGE.size : at + _PAGE.size + count])
        start = at + _PAGE.size + count
        body = data[start : start + sum(lacing)]
        if len(lacing) != count or len(body) != sum(lacing):
            raise ValueError("a torn Ogg page")
        yield kind, granule, lacing, body
        at = start + sum(lacing)


def packets(data: bytes) -> tuple[list[bytes], int]:
    """Every packet of a one-stream Ogg file, and the granule position of its last page."""
    out: list[bytes] = []
    pending = b""
    last = 0
    for _, granule, lacing, body in _pages(data):
        at = 0
        for size in lacing:
            pending += body[at : at + size]
            at += size
            if size < 255:
                out.append(pending)
                pending = b""
        last = granule if granule >= 0 else last
    return out, last


def samples_of(packet: bytes) -> int:
    """How many 48 kHz samples an Opus packet decodes to (RFC 6716, 3.1: its TOC byte)."""
    if not packet:
        raise ValueError("an empty Opus packet")
    config, code = packet[0] >> 3, packet[0] & 3
    if config < 12:
        frame = (480, 960, 1920, 2880)[config % 4]  # SILK: 10, 20, 40, 60 ms
    elif config < 16:
        frame = (480, 960)[config % 2]  # hybrid: 10, 20 ms
    else:
        frame = (120, 240, 480, 960)[config % 4]  # CELT: 2.5, 5, 10, 20 ms
    if code == 0:
        return frame
    if code in (1, 2):
        return 2 * frame
    if len(packet) < 2:
        raise ValueError("a torn Opus packet")
    return frame * (packet[1] & 0x3F)


@dataclass(frozen=True)
class Piece:
    """One encoded line: its headers, its audio packets, its priming (pre-skip), the samples
    its packets decode to and the samples it really holds with its priming (its last granule)."""

    head: bytes
    tags: bytes
    audio: tuple[bytes, ...]
    preskip: int
    decoded: int
    granule: int


def piece_of(data: bytes) -> Piece:
    """An Ogg Opus file (one line, as libsndfile writes it) read into its packets."""
    found, granule = packets(data)
    if len(found) < 2 or not found[0].startswith(b"OpusHead") or len(found[0]) < 19:
        raise ValueError("not an Ogg Opus file")
    preskip = int.from_bytes(found[0][10:12], "little")
    audio = tuple(found[2:])
    return Piece(found[0], found[1], audio, preskip, sum(map(samples_of, audio)), granule)


def _page(kind: int, granule: int, seq: int, packets_: Sequence[bytes]) -> bytes:
    lacing = bytearray()
    for packet in packets_:
        lacing += b"\xff" * (len(packet) // 255) + bytes([len(packet) % 255])
    header = _PAGE.pack(b"OggS", 0, kind, granule, _SERIAL, seq, 0, len(lacing))
    page = bytearray(header + lacing + b"".join(packets_))
    struct.pack_into("<I", page, 22, crc(bytes(page)))
    return bytes(page)


@dataclass(frozen=True)
class Joined:
    """The joined file, where each piece's own audio starts in it and how long it lasts
    (seconds)."""

    data: bytes
    starts: tuple[float, ...]
    seconds: float


def join(pieces: Sequence[Piece]) -> Joined:
    """One Ogg Opus stream of `pieces` in order (the first piece's headers)."""
    if not pieces:
        raise ValueError("nothing to join")
    first = pieces[0]
    pages = [_page(_BOS, 0, 0, [first.head]), _page(0, 0, 1, [first.tags])]
    starts: list[float] = []
    done = 0  # samples decoded before the current piece (with every priming)
    batch: list[bytes] = []
    at_end = 0  # samples decoded to the end of the batch
    for i, piece in enumerate(pieces):
        starts.append((done + piece.preskip - first.preskip) / OPUS_RATE)
        last_piece = i == len(pieces) - 1
        for n, packet in enumerate(piece.audio):
            batch.append(packet)
            at_end += samples_of(packet)
            final = last_piece and n == len(piece.audio) - 1
            if final or sum(map(len, batch)) >= _PAGE_BODY or len(batch) >= 200:
                granule = done + piece.granule if final else at_end
                pages.append(_page(_EOS if final else 0, granule, len(pages), batch))
                batch = []
        done += piece.decoded
    total = done - pieces[-1].decoded + pieces[-1].granule - first.preskip
    return Joined(b"".join(pages), tuple(starts), total / OPUS_RATE)
