"""Ogg Opus pieces joined packet by packet (engine/voice/ogg.py): the joined file is one stream
libsndfile reads whole, each piece starts where `join` says, and the page checksums are Ogg's."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest

from engine.voice import audio, ogg
from engine.voice.audio import RATE


def tone(freq: float, seconds: float, lead: float = 0.06) -> np.ndarray:
    n = int(seconds * RATE)
    x = (0.3 * np.sin(2 * np.pi * freq * np.arange(n) / RATE)).astype(np.float32)
    return np.concatenate(
        [np.zeros(int(lead * RATE), np.float32), x, np.zeros(RATE // 4, np.float32)]
    )


def pages(data: bytes):
    at = 0
    while at < len(data):
        count = data[at + 26]
        size = 27 + count + sum(data[at + 27 : at + 27 + count])
        yield bytearray(data[at : at + size])
        at += size


def test_the_checksum_is_oggs_own() -> None:
    encoded = audio.encode(tone(440, 1.0), "ogg")  # pages libsndfile (libogg) wrote
    found = list(pages(encoded))
    assert len(found) >= 3
    for page in found:
        stored = struct.unpack_from("<I", page, 22)[0]
        struct.pack_into("<I", page, 22, 0)
        assert ogg.crc(bytes(page)) == stored


def test_joined_pieces_play_as_one_stream_each_where_join_says() -> None:
    import soundfile

    made = [tone(300, 1.23), tone(500, 0.77), tone(700, 2.05)]
    joined = ogg.join([ogg.piece_of(audio.encode(x, "ogg")) for x in made])
    heard, rate = soundfile.read(io.BytesIO(joined.data), dtype="float32")
    assert len(heard) / rate == pytest.approx(joined.seconds, abs=1e-4)
    assert joined.seconds == pytest.approx(sum(len(x) for x in made) / RATE, abs=0.03 * 3)
    for start, freq in zip(joined.starts, (300, 500, 700), strict=True):
        begin = int((start + 0.06) * rate)
        window = heard[begin : begin + int(0.2 * rate)]
        assert float(np.sqrt((window**2).mean())) > 0.18  # the tone at full strength at once
        spectrum = np.abs(np.fft.rfft(window))
        assert np.argmax(spectrum) * rate / len(window) == pytest.approx(freq, abs=10)
        silent = heard[max(0, begin - int(0.05 * rate)) : begin - int(0.01 * rate)]
        assert float(np.abs(silent).max(initial=0)) < 0.02  # the lead before it is silence


@pytest.mark.parametrize(
    ("toc", "samples"),
    [
        (bytes([(1 << 3) | 0]), 960),  # SILK 20 ms, one frame
        (bytes([(15 << 3) | 1]), 1920),  # hybrid 20 ms, two frames
        (bytes([(31 << 3) | 0]), 960),  # CELT 20 ms
        (bytes([(16 << 3) | 3, 6]), 720),  # CELT 2.5 ms, six frames (code 3)
    ],
)
def test_a_packet_says_how_long_it_is(toc: bytes, samples: int) -> None:
    assert ogg.samples_of(toc + b"\x00" * 8) == samples


@pytest.mark.parametrize("data", [b"", b"RIFF" + b"\x00" * 40, b"OggS" + b"\x00" * 10])
def test_what_is_not_ogg_opus_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        ogg.piece_of(data)
