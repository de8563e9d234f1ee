"""What is wrong with a hand-built scene that still loads: one warning per problem, naming the
file (an empty soul, a cast entry without a folder, settings written without `---` fences, a
soul without its three parts, a soul or context still holding a blank scene's placeholder
guidance, a soul or context.md edit waiting in drafts/). Pure functions over the files' texts; a file that
does not load at all is the loader's error, not a warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.catalog import Phrase, say
from engine.errors import CircusError
from engine.folder import frontmatter
from engine.folder.setting_rules import CONTEXT_KEYS, SOUL_KEYS
from engine.folder.soul import guidance_lines, guided_parts, missing_parts
from engine.folder.templates import CONTEXT_GUIDE

_KEY = re.compile(r"\s*([A-Za-z_]+)\s*:")
# A blank scene's context, or the one `circus next` drafts (its lines without the scene's own
# names filled in), in any language.
_CONTEXT_GUIDANCE = guidance_lines([CONTEXT_GUIDE]) | {
    line for line in guidance_lines(["next.context"]) if "{" not in line
}


@dataclass(frozen=True)
class SceneWarning:
    """One problem: the catalog key saying it, its values, and the file inside the scene."""

    key: str
    path: str
    values: tuple[tuple[str, object], ...] = ()

    def text(self, language: object = "en", names_in: object | None = None) -> str:
        """The one line a director reads: `actors/Rose/soul.md: it has no text …`. `names_in`:
        the language the scene's files are written in, in which the parts it names are said
        (角色小傳 in a Chinese soul, whatever language the sentence around it is in)."""
        names = language if names_in is None else names_in
        values = {
            name: tuple(v.render(names) if isinstance(v, Phrase) else v for v in value)
            if isinstance(value, tuple)
            else value
            for name, value in self.values
        }
        return say("warning.line", language, path=self.path, what=Phrase(self.key, **values))


def unfenced_settings(text: str, known: Iterable[str]) -> tuple[str, ...]:
    """The setting names a file opens with when it has no `---` fences around them
    ("language: en" as its first line), else (): those lines reach every model as text."""
    if text.lstrip("\ufeff").startswith("---"):
        return ()
    names = set(known)
    found: list[str] = []
    for line in text.lstrip("\ufeff").splitlines():
        if not line.strip():
            if found:
                break
            continue
        match = _KEY.match(line)
        if match is None or match.group(1) not in names:
            break
        found.append(match.group(1))
    return tuple(found)


def _read_context(context: str) -> tuple[list[str], str]:
    """(the cast setting, the body) of context.md (nothing if it does not load: the loader
    says what is wrong with it)."""
    try:
        settings, body = frontmatter.split(context)
    except CircusError:
        return [], ""
    cast = settings.get("cast")
    return ([str(c) for c in cast] if isinstance(cast, list) else []), body


def _holds_context_guidance(body: str) -> bool:
    """True if a context body still holds a line of a blank scene's placeholder guidance."""
    return any(line.strip() in _CONTEXT_GUIDANCE for line in body.splitlines())


def check_scene(
    context: str,
    souls: Mapping[str, str | None],
    drafts: Iterable[str] = (),
    *,
    context_draft: bool = False,
) -> tuple[SceneWarning, ...]:
    """Warnings for a scene: `context` is context.md's text, `souls` each actor folder's
    soul.md text (None when it is missing), `drafts` the actors with a kept soul draft,
    `context_draft` whether a context.md edit is kept in drafts/."""
    out: list[SceneWarning] = []
    keys = unfenced_settings(context, CONTEXT_KEYS)
    if keys:
        out.append(SceneWarning("warning.no_fences", "context.md", (("keys", keys),)))
    cast, context_body = _read_context(context)
    for name in cast:
        if name not in souls:
            out.append(SceneWarning("warning.cast_no_folder", "context.md", (("name", name),)))
    if _holds_context_guidance(context_body):
        out.append(SceneWarning("warning.context_guidance", "context.md"))
    for actor, text in souls.items():
        rel = f"actors/{actor}/soul.md"
        if text is None:
            out.append(SceneWarning("warning.no_soul", rel))
            continue
        keys = unfenced_settings(text, SOUL_KEYS)
        if keys:
            out.append(SceneWarning("warning.no_fences", rel, (("keys", keys),)))
        try:
            _, body = frontmatter.split(text)
        except CircusError:
            continue
        if not body.strip():
            out.append(SceneWarning("warning.soul_empty", rel))
            continue
        missing = missing_parts(body)
        if missing:
            parts = tuple(Phrase(key) for key in missing)
            out.append(SceneWarning("warning.soul_parts", rel, (("parts", parts),)))
        guided = guided_parts(body)
        if guided:
            parts = tuple(Phrase(key) for key in guided)
            out.append(SceneWarning("warning.soul_guidance", rel, (("parts", parts),)))
    for actor in drafts:
        out.append(
            SceneWarning("warning.soul_draft", f"drafts/{actor}.soul.md", (("actor", actor),))
        )
    if context_draft:
        out.append(SceneWarning("warning.context_draft", "drafts/context.md"))
    return tuple(out)
