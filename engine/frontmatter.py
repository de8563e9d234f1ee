"""YAML front matter: scene and actor settings at the top of a markdown file.

`split` and `join` round-trip exactly: the header text is kept as written, so a file the engine
only reads is never reformatted. Settings are never shown to any model.
"""

from __future__ import annotations

from typing import Any

import yaml

from engine.errors import BadSceneFile

_FENCE = "---"


def split(text: str, path: object = "file") -> tuple[dict[str, Any], str]:
    """Return (settings, body). A file without front matter has empty settings."""
    if not text.startswith(_FENCE):
        return {}, text
    lines = text.split("\n")
    if lines[0].strip() != _FENCE:
        return {}, text
    for i in range(1, len(lines)):
        if lines[i].strip() == _FENCE:
            header = "\n".join(lines[1:i])
            body = "\n".join(lines[i + 1 :])
            try:
                data = yaml.safe_load(header) if header.strip() else {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" (line {mark.line + 2})" if mark is not None else ""
                raise BadSceneFile(
                    path,
                    f"the front matter between the --- lines is not valid YAML{where}",
                    f"兩條 --- 之間的設定不是有效的 YAML{where}",
                ) from exc
            if data is None:
                data = {}
            if not isinstance(data, dict):
                raise BadSceneFile(
                    path,
                    "the front matter must be `key: value` lines",
                    "設定必須是 `鍵: 值` 的格式",
                )
            return data, body
    raise BadSceneFile(
        path,
        "the front matter has an opening --- but no closing ---",
        "設定開頭有 --- 但沒有結尾的 ---",
    )


def join(settings: dict[str, Any], body: str) -> str:
    """Render settings and body into one markdown file."""
    if not settings:
        return body
    header = yaml.safe_dump(settings, allow_unicode=True, sort_keys=False).rstrip("\n")
    return f"{_FENCE}\n{header}\n{_FENCE}\n{body}"
