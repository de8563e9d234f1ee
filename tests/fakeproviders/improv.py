"""What the fake providers answer, and how they count tokens: shared by every fake here.

`Improv` plays whichever role the prompt asks for, from the prompt alone: an actor (named in the
rules' first line) answers a well-formed turn that cues another member of the cast, in tags or
as the JSON object; the stage manager names someone. `units` cuts text the way the fakes count
tokens (one CJK character, or up to four other characters), deterministic and quick.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

_UNIT = re.compile(r"[\u2e80-\U0010ffff]|[^\u2e80-\U0010ffff]{1,4}", re.S)


def units(text: str) -> list[str]:
    """The text as the fakes' tokens."""
    return _UNIT.findall(text)


def count(text: str) -> int:
    return len(units(text))


THOUGHTS = ["他問得太快，像早就知道答案。", "信封的事他提了兩次。", "她的手在抖，她知道得更多。"]
ACTIONS = ["把杯子推到桌子中央。", "靠回椅背，敲了三下桌面。", "沉默地翻過一頁筆錄。"]
LINES = [
    "「十一點我在家，說過三次了。」",
    "「監視器可不是這麼說的。」",
    "「我的當事人有權不回答。」",
]


class Improv:
    """Answers for a known cast: turn i of the fake cues the next actor after the speaker."""

    def __init__(self, cast: Sequence[str]) -> None:
        self.cast = tuple(cast)
        self.calls = 0

    def speaker(self, system: str) -> str | None:
        first = system.split("\n", 1)[0]
        named = [a for a in self.cast if a in first]
        return max(named, key=len) if named else None

    def answer(self, system: str, json_mode: bool) -> str:
        i = self.calls
        self.calls += 1
        me = self.speaker(system)
        if me is None:  # the stage manager
            pick = self.cast[i % len(self.cast)]
            if json_mode:
                return json.dumps({"next": pick, "reason": "fake"}, ensure_ascii=False)
            return f"NEXT: {pick}\nREASON: fake"
        others = [a for a in self.cast if a != me] or [me]
        fields = {
            "thought": THOUGHTS[i % 3],
            "action": ACTIONS[i % 3],
            "dialogue": LINES[(i + 1) % 3],
            "cue": others[i % len(others)],
        }
        if json_mode:
            return json.dumps(fields, ensure_ascii=False)
        return "".join(f"<{k}>{v}</{k}>" for k, v in fields.items())
