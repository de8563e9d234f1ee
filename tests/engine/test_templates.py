"""The shipped scene templates: well-formed, within the prompt budget, and true to the walls —
each secret lives in one soul only, and no prior story knows what its character cannot."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from scenekit import operator_config

from engine.folder import frontmatter
from engine.folder.scene import SceneFiles
from engine.folder.templates import list_templates, new_scene, template_path, templates_dir
from engine.folder.whispers import parse_notes
from engine.turn.record_lines import estimate_tokens

SECTIONS = {
    "zh": ("角色小傳", "前期劇本", "導戲筆記"),
    "en": ("Bio", "Prior story", "Director's notes"),
}

# Phrases that belong to one character's private knowledge: they must appear in that soul and
# nowhere else in the scene (context, notes, transcript, other souls).
SECRETS = {
    "interrogation": {
        "林小姐": ["置物櫃", "手機殼", "隱藏相簿", "偷拍", "照片", "澳門"],
        "刑警": ["後門", "二十萬", "弟弟"],
        "律師": ["陳董", "委任狀", "十七年前"],
    },
    "wake": {
        "Ruth": ["vial", "$31,000", "manila envelope"],
        "Danny": ["Ray", "$60,000", "pawn"],
        "Carol": ["baby monitor", "$4,100", "House is yours"],
    },
}
# Steps instead of goals kill improvisation (seed §6.3).
STEP_WORDS = re.compile(r"首先|然後|接著|最後|\bfirst,|\bthen\b|\bfinally\b|\bstep\b", re.I)


def test_the_shipped_templates_are_listed() -> None:
    assert {"interrogation", "wake"} <= set(list_templates(config=operator_config()))


@pytest.fixture(params=sorted(SECRETS))
def template(request: pytest.FixtureRequest) -> str:
    return request.param


async def test_template_is_a_valid_scene_on_the_default_model(template: str) -> None:
    root = templates_dir(config=operator_config()) / template
    state = await SceneFiles(root).load()
    settings = state.settings
    assert settings["language"] in ("zh", "en")
    assert settings["neglect_turns"] == 3
    assert "model" not in settings and "stage_manager_model" not in settings
    assert settings["cast"] == state.cast == list(SECRETS[template])
    assert 2 <= len(state.cast) <= 4
    for soul in state.souls.values():
        assert "model" not in soul.settings
    assert state.turns == []
    transcript = (root / "transcript.md").read_text(encoding="utf-8")
    assert transcript.startswith("# ") and transcript.strip().count("\n") == 0
    notes = (root / "director_notes.md").read_text(encoding="utf-8")
    assert not parse_notes(notes, state.cast).unknown_sections
    everyone = "## 全體" if settings["language"] == "zh" else "## Everyone"
    assert everyone in notes and all(f"## {a}" in notes for a in state.cast)
    assert 100 <= estimate_tokens(state.context) <= 450


async def test_souls_have_three_parts_within_budget(template: str) -> None:
    state = await SceneFiles(templates_dir(config=operator_config()) / template).load()
    heads = SECTIONS[state.language]
    for actor, soul in state.souls.items():
        found = re.findall(r"^## (.+?)\s*$", soul.body, re.M)
        assert tuple(found) == heads, (actor, found)
        tokens = estimate_tokens(soul.body)
        assert 400 <= tokens <= 800, (actor, tokens)
        notes = soul.body.split(f"## {heads[2]}")[1]
        assert not STEP_WORDS.search(notes), f"{actor}'s director's notes read like steps"
        assert ("但" in notes) if state.language == "zh" else ("But" in notes), (
            f"{actor}'s director's notes need a contradiction (wants it but also doesn't)"
        )


def test_each_secret_lives_in_one_soul_only(template: str) -> None:
    root = templates_dir(config=operator_config()) / template
    texts = {
        str(p.relative_to(root)): frontmatter.split(p.read_text(encoding="utf-8"))[1]
        for p in root.rglob("*.md")
    }
    for actor, phrases in SECRETS[template].items():
        own = f"actors/{actor}/soul.md"
        for phrase in phrases:
            assert phrase in texts[own], (actor, phrase)
            for rel, text in texts.items():
                if rel != own:
                    assert phrase not in text, f"{phrase!r} ({actor}'s secret) leaks into {rel}"


def test_prior_stories_know_only_what_their_character_knows() -> None:
    root = templates_dir(config=operator_config())

    def part(template: str, actor: str, heading: str) -> str:
        body = (root / template / "actors" / actor / "soul.md").read_text(encoding="utf-8")
        return body.split(f"## {heading}")[1].split("\n## ")[0]

    # 林小姐 saw the detective take the envelope; the detective must not know she saw it.
    assert "牛皮紙袋" in part("interrogation", "林小姐", "前期劇本")
    detective = (root / "interrogation" / "actors" / "刑警" / "soul.md").read_text("utf-8")
    assert "四下無人" in detective and "林" not in detective.split("## 前期劇本")[0]
    # The lawyer does not know about the ledger or the bribe.
    lawyer = (root / "interrogation" / "actors" / "律師" / "soul.md").read_text("utf-8")
    assert "帳冊" not in lawyer and "牛皮紙袋" not in lawyer
    # Ruth does not know Carol heard; Danny does not know what the will says.
    assert "monitor" not in part("wake", "Ruth", "Prior story")
    assert "doesn't know what the will says" in part("wake", "Danny", "Prior story")
    assert "house goes to Carol" not in part("wake", "Danny", "Prior story")


def test_new_scene_copies_a_template(tmp_path: Path) -> None:
    for name in list_templates(config=operator_config()):
        dest = new_scene(tmp_path / name, name, config=operator_config())
        assert (dest / "context.md").read_bytes() == (
            templates_dir(config=operator_config()) / name / "context.md"
        ).read_bytes()
        assert not (dest / "takes").exists()


def test_a_fresh_clone_has_the_scenes_folder_the_readme_creates_scenes_in() -> None:
    """The quick start says `circus new scenes/s1 …`, and `new` refuses a missing parent
    folder: the repository ships scenes/ (with a README; git ignores the writer's scenes)."""
    root = Path(__file__).resolve().parents[2]
    assert (root / "scenes" / "README.md").is_file()
    ignore = (root / ".gitignore").read_text("utf-8").splitlines()
    assert "scenes/*" in ignore and "!scenes/README.md" in ignore
    readme = (root / "README.md").read_text("utf-8")
    assert "circus new scenes/s1" in readme


def test_a_templates_folder_of_your_own_adds_to_the_shipped_ones(tmp_path: Path) -> None:
    from dataclasses import replace

    mine = tmp_path / "mine"
    shutil.copytree(templates_dir(config=operator_config()) / "wake", mine / "vigil")
    (mine / "wake").mkdir()  # one of yours named like a shipped template replaces it
    (mine / "wake" / "context.md").write_text("---\ncast: []\n---\n# My wake\n", "utf-8")
    config = replace(operator_config(), templates_dir=mine)
    assert list_templates(config=config) == ["interrogation", "vigil", "wake"]
    made = new_scene(tmp_path / "s", config=config)  # the default template is still there
    assert "林小姐" in (made / "context.md").read_text("utf-8")
    assert template_path("wake", config) == mine / "wake"
    assert template_path("interrogation", config).parent != mine
