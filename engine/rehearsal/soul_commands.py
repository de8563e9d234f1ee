"""The director's commands on an actor's soul: read and replace soul.md, draft its prior story
from a full backstory (a model call), and keep a soul edit that could not be used.

A command group of Rehearsal over the scene on disk (engine.rehearsal.scene_access). A refused soul writes
nothing; a soul is never replaced beside a run; a prior story that is replaced is first kept in
drafts/ (`kept_story_path`), so nothing the writer wrote is lost; a summary spends from the
scene's budgets and is recorded like every other call (engine.rehearsal.spending).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.config import Config
from engine.door import llm
from engine.errors import BadRequest, BadSceneFile, CircusError
from engine.folder import frontmatter
from engine.folder.names import Actor
from engine.folder.role_models import (
    api_base,
    extra_params,
    sent_reply_cap,
    stage_manager_model,
    turn_timeout,
)
from engine.folder.scene import DRAFTS, draft_path, refuse_alias_clash, soul_path
from engine.folder.settings import MAX_FILE_BYTES, check_untrusted_soul, soul_model
from engine.folder.soul import (
    bio_part,
    inside_a_part,
    is_guidance,
    parse_soul,
    prior_story,
    replace_prior_story,
)
from engine.rehearsal.results import check_origin, given_text
from engine.rehearsal.run_slot import RunSlot
from engine.rehearsal.scene_access import SceneAccess
from engine.rehearsal.spending import Spending
from engine.turn.prompts import bio_messages, summarize_messages
from engine.vocabulary import Origin

if TYPE_CHECKING:  # the schema loads only when a soul is edited
    from engine.folder.setting_schemas import SoulSettings


def kept_story_path(actor: str, number: int) -> str:
    """Where the `number`th prior story of `actor` replaced by a new one is kept."""
    return f"{DRAFTS}/{actor}.prior-story.{number}.md"


def _kept_number(actor: str, name: str) -> int:
    """The number of a kept prior story's file name (0 if it is not one of `actor`'s)."""
    head, tail = f"{actor}.prior-story.", ".md"
    if not (name.startswith(head) and name.endswith(tail)):
        return 0
    number = name[len(head) : -len(tail)]
    return int(number) if number.isascii() and number.isdigit() else 0


class Souls:
    """Souls, prior stories and soul drafts for one scene folder."""

    def __init__(
        self,
        scene: SceneAccess,
        slot: RunSlot,
        models: llm.Models,
        config: Config,
        spending: Spending,
    ) -> None:
        self.scene, self.slot, self.models = scene, slot, models
        self.config, self.spending = config, spending

    async def text(self, actor: Actor) -> str:
        name = (await self.scene.state()).member(actor)
        return await self.scene.store.read(soul_path(name)) or ""

    async def set(self, actor: Actor, text: str, *, origin: Origin = "operator") -> None:
        """Replace an actor's soul.md; refused (nothing written) if its front matter is broken.

        `origin="member"`: the text came from an untrusted member, so it may not set
        `api_base`, nor a `model`/`fallback_model` outside `allowed_models()` (Refused).
        """
        check_origin(origin)
        state = await self.scene.state()
        name = state.member(actor)
        rel = soul_path(name)
        path = self.scene.root / rel
        text = given_text(text, path, rel)
        new = parse_soul(name, text, path, rel)
        if not new.body:
            raise BadSceneFile(path, "error.file.soul_empty", rel=rel)
        # refused before writing, as actor add refuses it: else every later command would fail
        refuse_alias_clash(self.scene.root, {**state.aliases(), name: new.aliases})
        if origin == "member":
            current = await self._soul_on_disk(name)
            check_untrusted_soul(soul_model(new.settings), current, self.config)
        self.slot.refuse_if_running()
        await self.scene.store.write_atomic(rel, text)

    async def _soul_on_disk(self, name: str) -> SoulSettings | None:
        """The settings in `name`'s soul.md now (None if it is missing or unreadable)."""
        rel = soul_path(name)
        try:
            text = await self.scene.store.read(rel, limit=MAX_FILE_BYTES)
            if text is None:
                return None
            return soul_model(parse_soul(name, text, self.scene.root / rel, rel).settings)
        except CircusError:
            return None

    # ----------------------------------------------------------------- prior story
    async def summarize_for(self, actor: Actor, full_history: str, write: bool = True) -> str:
        """Draft part 2 of `actor`'s soul (what they know) from the director's full backstory;
        with `write`, the draft is written as `accept_prior_story` writes it."""
        if not full_history.strip():
            raise BadRequest("error.backstory_empty")
        state = await self.scene.state()
        name = state.member(actor)
        soul = state.souls[name]
        messages = summarize_messages(name, bio_part(soul.body), full_history, state.language)
        story = await self._drafted(name, messages)
        if write and story:
            await self.accept_prior_story(Actor(name), story)
        return story

    async def draft_bio(self, actor: Actor, witnessed: str) -> str:
        """A draft of part 1 of `actor`'s soul (the bio) from only what `actor` said, did and
        witnessed in the pages it came from (`circus import --draft`). Billed and recorded as
        every call; the caller writes it (engine.folder.soul.replace_bio)."""
        if not witnessed.strip():
            raise BadRequest("error.backstory_empty")
        state = await self.scene.state()
        name = state.member(actor)
        return await self._drafted(name, bio_messages(name, witnessed, state.language))

    async def _drafted(self, name: str, messages: tuple[dict[str, str], ...]) -> str:
        """One drafting call by the scene's summarising model (the stage manager's): spent from
        the same budgets, and recorded like every other call."""
        state = await self.scene.state()
        soul, config = state.souls[name], self.config
        model = stage_manager_model(state.settings, config)
        guard = await self.spending.guard()
        guard.begin_turn(
            self.spending.limits(state),
            await self.spending.scene_spent(state),
            take=await self.scene.current_take(),
        )
        call = llm.ModelCall(
            model=model,
            messages=messages,
            api_base=api_base(soul, state.settings, config),
            timeout=turn_timeout(state.settings, config),
            max_tokens=sent_reply_cap(model, "free", config),
            extra=extra_params(model, config),
            retries=config.model_retries,
            purpose="summarize",
        )
        reply = await self.models.complete(call, gate=guard)
        return reply.text.strip()

    async def _write_prior_story(self, name: str, story: str) -> str | None:
        """Replace part 2 of `name`'s soul.md with `story`; its settings and other parts stay.
        The prior story it replaces is kept first: returns where (None: nothing to keep)."""
        language = (await self.scene.state()).language
        store, rel = self.scene.store, soul_path(name)
        text = await store.read(rel) or ""
        _, body = frontmatter.split(text, self.scene.root / rel)
        kept = await self._keep_prior_story(name, prior_story(body), story)
        new_body = replace_prior_story(body, story, language)
        header = text[: len(text) - len(body)] if text.endswith(body) else ""  # body may be empty
        await store.write_atomic(rel, header + new_body)
        return kept

    async def _keep_prior_story(self, name: str, old: str, new: str) -> str | None:
        """Keep `old` in drafts/ under the next free number, unless there is nothing of the
        writer's to lose (empty, the new soul's guidance, or the very story written again)."""
        if not old or is_guidance(old) or old == inside_a_part(new).strip():
            return None
        names = await self.scene.store.listdir(DRAFTS)
        number = 1 + max((_kept_number(name, n) for n in names), default=0)
        rel = kept_story_path(name, number)
        await self.scene.store.write_atomic(rel, old + "\n")
        return rel

    async def backstory_drafts(self, full_backstory: str) -> dict[str, str]:
        """Each actor's prior story drafted from the full backstory (one summary call each,
        shown that actor's own bio only). Nothing is written: `accept_prior_story` does."""
        if not isinstance(full_backstory, str) or not full_backstory.strip():
            raise BadRequest("error.backstory_empty")
        state = await self.scene.state()
        return {
            name: await self.summarize_for(Actor(name), full_backstory, write=False)
            for name in state.cast
        }

    async def accept_prior_story(self, actor: Actor, text: str) -> str | None:
        """Write `text` as part 2 (the prior story) of the actor's soul; the rest unchanged.
        Returns where the prior story it replaced is kept, inside the scene (None: it had none)."""
        name = (await self.scene.state()).member(actor)
        rel = soul_path(name)
        story = given_text(text, self.scene.root / rel, rel).strip()
        if not story:
            raise BadRequest("error.prior_story_empty", name=name)
        self.slot.refuse_if_running()
        return await self._write_prior_story(name, story)

    # ----------------------------------------------------------------- soul drafts
    async def save_draft(self, actor: Actor, text: str) -> str:
        """Keep a soul edit that could not be used, in drafts/<actor>.soul.md (never loaded,
        never in a take). Returns that path inside the scene."""
        name = (await self.scene.state()).member(actor)
        rel = draft_path(name)
        await self.scene.store.write_atomic(rel, given_text(text, self.scene.root / rel, rel))
        return rel

    async def draft(self, actor: Actor) -> str | None:
        """The kept draft of the actor's soul, if there is one."""
        name = (await self.scene.state()).member(actor)
        return await self.scene.store.read(draft_path(name), limit=MAX_FILE_BYTES)

    async def drop_draft(self, actor: Actor) -> None:
        name = (await self.scene.state()).member(actor)
        self.scene.store.remove(draft_path(name))
