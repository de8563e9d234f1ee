"""Voices in the files: the settings, the defaults, what Discord may set, and the offline
engine speaking English and Chinese."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakeproviders import FakeSpeech
from readkit import distinct, samples, speech_config

from engine import BadSceneFile, CircusError, Config, ReadOrder, Rehearsal
from engine.errors import Refused
from engine.folder.settings import context_settings, soul_settings
from engine.folder.voices import OFFLINE, Voice, allowed_voices, cast_voices, leaning

CAST12 = [f"A{i}" for i in range(12)]


# ------------------------------------------------------------------ the settings
@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ({"voice": "alloy"}, {"voice": {"name": "alloy"}}),
        ({"voice": {"name": "en-us+f3", "pitch": 60, "rate": 170}},
         {"voice": {"name": "en-us+f3", "pitch": 60, "rate": 170}}),
        ({"voice": "en-US-JennyNeural"}, {"voice": {"name": "en-US-JennyNeural"}}),
    ],
)  # fmt: skip
def test_a_soul_voice_is_a_name_or_a_name_with_pitch_and_rate(raw, kept) -> None:
    assert soul_settings(raw, "soul.md").as_dict() == kept


@pytest.mark.parametrize(
    "raw",
    [
        {"voice": "two words"},
        {"voice": ""},
        {"voice": 7},
        {"voice": {"name": "x", "pitch": 100}},
        {"voice": {"name": "x", "rate": 20}},
        {"voice": {"nam": "x"}},
        {"voice": "../../etc/passwd"},
        {"voice": "x" * 65},
    ],
)
def test_a_bad_voice_is_refused_naming_the_key_and_what_it_must_be(raw) -> None:
    with pytest.raises(BadSceneFile) as err:
        soul_settings(raw, "actors/林小姐/soul.md")
    assert "`voice` must be a voice name" in str(err.value)


def test_context_holds_the_narrator_the_thoughts_and_the_read_settings() -> None:
    raw = {"narrator_voice": "fable", "thoughts_voice": {"name": "cmn+whisper"},
           "read_model": "openai/tts-1", "spectators_read": True}  # fmt: skip
    assert context_settings(raw, "context.md").as_dict()["narrator_voice"] == {"name": "fable"}
    with pytest.raises(BadSceneFile, match="narator_voice"):
        context_settings({"narator_voice": "fable"}, "context.md")


# ------------------------------------------------------------------ the defaults
@pytest.mark.parametrize("engine", [OFFLINE, "openai/tts-1"])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_actor_gets_a_distinct_default_and_the_narrator_its_own(engine, language) -> None:
    cast = CAST12  # a cast is at most 12 (engine.MAX_CAST)
    casting = cast_voices(cast, {}, engine, language)
    voices = [casting.actors[a].key for a in cast]
    assert len(set(voices)) == len(cast)
    assert casting.narrator.key not in voices and casting.thoughts.key not in voices


def test_a_chosen_voice_is_never_another_actors_default() -> None:
    first = cast_voices(["A", "B"], {}, OFFLINE, "en")
    taken = first.actors["B"]
    casting = cast_voices(["A", "B", "C"], {"C": taken}, OFFLINE, "en")
    assert casting.actors["C"] == taken
    assert taken not in (casting.actors["A"], casting.actors["B"])


@pytest.mark.parametrize(
    ("bio", "leans"),
    [
        ("Ruth, 58. She keeps the house. Her son calls on Sundays; she never calls back.", "f"),
        ("Danny drinks. He owes money; his sister knows, and he hates that she does.", "m"),
        ("王志豪，四十八歲。他相信案子要辦乾淨，他的女兒讀高三。", "m"),
        ("林靜宜，三十四歲，會計。她知道帳冊在哪裡，她不說。", "f"),
        ("A voice on the phone. Nobody has met them.", None),
        ("She met him once; he said she was late.", None),  # neither twice as often
        ("The shelter's heavy door.", None),  # "he" inside a word is no pronoun
    ],
)
def test_a_bio_leans_to_she_or_he_only_clearly(bio, leans) -> None:
    assert leaning(bio) == leans


def test_offline_defaults_match_the_bio_while_such_timbres_are_left() -> None:
    leans = {"Ruth": "f", "Danny": "m", "Carol": "f", "Vox": None}
    casting = cast_voices(["Ruth", "Danny", "Carol", "Vox"], {}, OFFLINE, "en", leanings=leans)
    timbre = {a: v.name.rpartition("+")[2][0] for a, v in casting.actors.items()}
    assert (timbre["Ruth"], timbre["Danny"], timbre["Carol"]) == ("f", "m", "f")
    assert len({v.key for v in casting.actors.values()}) == 4  # still all distinct
    seven = {f"W{i}": "f" for i in range(7)}  # eSpeak has six women's timbres: then pitched
    many = cast_voices(list(seven), {}, OFFLINE, "en", leanings=seven)
    assert len({v.key for v in many.actors.values()}) == 7
    hosted = cast_voices(["Ruth"], {}, "openai/tts-1", "en", leanings={"Ruth": "f"})
    assert hosted.actors == cast_voices(["Ruth"], {}, "openai/tts-1", "en").actors


async def test_the_wake_scenes_women_read_in_womens_voices(tmp_path: Path) -> None:
    from scenekit import operator_config

    from engine.folder.scene import SceneFiles
    from engine.folder.templates import new_scene

    scene = new_scene(tmp_path / "wake", "wake", config=operator_config())
    state = await SceneFiles(scene).load()
    casting = Rehearsal(scene).read.casting(state, OFFLINE)
    timbre = {a: v.name.rpartition("+")[2][0] for a, v in casting.actors.items()}
    assert timbre == {"Ruth": "f", "Danny": "m", "Carol": "f"}


@pytest.mark.parametrize(("language", "base"), [("en", "en-us"), ("zh", "cmn"), ("zh-TW", "cmn")])
def test_the_scene_language_picks_the_offline_voice(language, base) -> None:
    casting = cast_voices(["A"], {}, OFFLINE, language)
    assert casting.narrator.name == base and casting.actors["A"].name.startswith(base + "+")


# ------------------------------------------------------------------ Discord
def test_from_discord_only_the_operators_voices(scene: Path) -> None:
    from engine.folder.settings import check_untrusted_context, check_untrusted_soul

    config = Config(voices="alloy, nova")
    assert allowed_voices(config) == ("alloy", "nova")
    check_untrusted_soul(soul_settings({"voice": "nova"}, "s"), None, config)
    with pytest.raises(Refused) as err:
        check_untrusted_soul(soul_settings({"voice": "shimmer"}, "s"), None, config)
    assert "alloy, nova" in str(err.value) and "CIRCUS_VOICES" in str(err.value)
    with pytest.raises(Refused):
        check_untrusted_context(context_settings({"narrator_voice": "onyx"}, "c"), None, config)
    with pytest.raises(Refused, match="read_model"):
        check_untrusted_context(context_settings({"read_model": "openai/tts-1"}, "c"), None, config)
    on_disk = soul_settings({"voice": "shimmer"}, "s")  # the operator wrote it: kept as it is
    check_untrusted_soul(soul_settings({"voice": "shimmer"}, "s"), on_disk, config)


def test_without_a_list_discord_may_choose_the_default_voices() -> None:
    names = allowed_voices(Config())
    assert {"alloy", "fable", "cmn+f3", "en-us+m3"} <= set(names)


async def test_a_soul_sent_from_discord_with_a_voice_off_the_list_writes_nothing(
    scene: Path, scripted
) -> None:
    r = Rehearsal(scene, models=scripted, config=Config(voices="alloy"))
    actor = await r.resolve_actor("林小姐")
    soul = scene / "actors" / "林小姐" / "soul.md"
    before = soul.read_text(encoding="utf-8")
    with pytest.raises(Refused):
        await r.souls.set(actor, "---\nvoice: shimmer\n---\n## 角色小傳\n林。\n", origin="member")
    assert soul.read_text(encoding="utf-8") == before


# ------------------------------------------------------------------ voices in a read
async def test_the_files_choose_the_voices_a_read_sends(scene: Path, scripted) -> None:
    soul = scene / "actors" / "林小姐" / "soul.md"
    soul.write_text("---\nvoice: echo\n" + soul.read_text(encoding="utf-8")[4:], encoding="utf-8")
    context = scene / "context.md"
    context.write_text(
        "---\nnarrator_voice: onyx\n" + context.read_text(encoding="utf-8")[4:], encoding="utf-8"
    )
    scripted.register("improv", distinct)
    fake = FakeSpeech()
    async with fake as base:
        r = Rehearsal(scene, models=scripted, config=speech_config(base))
        await r.run(3)
        await r.read.read(ReadOrder())
    by_voice: dict[str, set[str]] = {}
    for voice, text in fake.said():
        who = "narrator" if "moves a chair" in text or "審訊室" in text else text.split()[-1]
        by_voice.setdefault(voice, set()).add(who)
    assert by_voice["onyx"] == {"narrator"}
    assert by_voice["echo"] == {"林小姐."}
    assert all(len(who) == 1 for who in by_voice.values())  # one speaker per voice


# ------------------------------------------------------------------ the offline engine
@pytest.mark.parametrize(
    ("voice", "text"),
    [
        ("en-us+f3", "You came back. I didn't think you would."),
        ("cmn+m3", "你回來了，我以為你不會回來。"),
    ],
)
async def test_the_offline_engine_speaks_english_and_chinese(voice, text) -> None:
    from engine.voice.audio import RATE
    from engine.voice.espeak import Espeak

    heard = await Espeak().say(text, Voice(voice))
    assert len(heard) / RATE > 0.5
    assert float((heard**2).mean()) ** 0.5 > 0.01  # not silence


async def test_an_offline_read_writes_a_playable_file(scene: Path, scripted) -> None:
    scripted.register("improv", distinct)
    r = Rehearsal(scene, models=scripted, config=Config())
    await r.run(2)
    result = await r.read.read(ReadOrder())
    heard, rate = samples(result.audio[0])
    assert rate in (24_000, 48_000) and len(heard) / rate > 3
    assert float((heard**2).mean()) ** 0.5 > 0.01
    assert result.engine == OFFLINE


async def test_a_voice_the_offline_engine_lacks_is_refused_before_anything_is_read(
    scene: Path, scripted
) -> None:
    soul = scene / "actors" / "律師" / "soul.md"
    soul.write_text(
        "---\nvoice: en-us+nobody\n" + soul.read_text(encoding="utf-8")[4:], encoding="utf-8"
    )
    r = Rehearsal(scene, models=scripted, config=Config())
    await r.run(2)
    with pytest.raises(CircusError) as err:
        await r.read.read(ReadOrder())
    assert str(err.value).startswith("espeak has no voice 'en-us+nobody'")
    assert not (scene / "exports").exists() and not (scene / ".circus" / "voice").exists()


async def test_a_voice_openai_lacks_is_refused_before_any_request(scene: Path, scripted) -> None:
    soul = scene / "actors" / "刑警" / "soul.md"
    soul.write_text("---\nvoice: cmn+m3\n" + soul.read_text(encoding="utf-8")[4:], encoding="utf-8")
    config = Config.from_env({"CIRCUS_TTS_MODEL": "openai/tts-1"})  # no server: nothing may go
    r = Rehearsal(scene, models=scripted, config=config)
    await r.run(1)
    with pytest.raises(CircusError) as err:
        await r.read.read(ReadOrder())
    assert str(err.value).startswith("openai/tts-1 has no voice 'cmn+m3'")


async def test_the_cache_keeps_to_its_bound_forgetting_the_least_recently_read(tmp_path) -> None:
    import os

    from engine.folder.store import SceneStore
    from engine.voice.cache import CACHE_DIR, LineCache

    store = SceneStore(tmp_path)
    cache = LineCache(store, max_bytes=10_000)
    for i in range(6):
        await cache.put_bytes(f"line{i}.flac", bytes(3_000))
        os.utime(store.path(f"{CACHE_DIR}/line{i}.flac"), (1000 + i, 1000 + i))
    await cache.get_bytes("line0.flac")  # read now: the most recent
    assert cache.trim() == 4
    assert sorted(p.name for p in store.path(CACHE_DIR).iterdir()) == ["line0.flac", "line5.flac"]


async def test_with_no_cache_nothing_is_kept(scene: Path, scripted) -> None:
    scripted.register("improv", distinct)
    r = Rehearsal(scene, models=scripted, config=Config.from_env({"CIRCUS_READ_CACHE_MB": "0"}))
    await r.run(2)
    first = await r.read.read(ReadOrder())
    again = await r.read.read(ReadOrder())
    assert first.made == again.made == first.lines and again.cached == 0
    assert not (scene / ".circus" / "voice").exists()
