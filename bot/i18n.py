"""The bot's words: `t(key)` says `bot.<key>` from engine's catalog; slash-command localisations.

Replies follow the scene's `language` (engine.is_zh decides); outside a scene they follow the
user's Discord locale. Command and option descriptions are written in English and carry zh-TW /
zh-CN translations that Discord shows per user. A missing key is a bug (KeyError).
"""

from __future__ import annotations

from discord import Locale, app_commands

from engine import lang_of, say

__all__ = ["COMMAND_TEXT", "CommandTranslator", "lang_of", "t"]  # lang_of is engine's, re-exported


def t(key: str, lang: str, **values: object) -> str:
    """The sentence `bot.<key>` of the catalog in `lang` ("zh" or "en"), filled with `values`."""
    return say("bot." + key, lang, **values)


# English description -> (Traditional Chinese, Simplified Chinese), for slash command metadata.
COMMAND_TEXT: dict[str, tuple[str, str]] = {
    "Create, list and open scenes": ("建立、列出、開啟場景", "创建、列出、打开场景"),
    "Create a scene and its thread": ("建立一場戲和它的討論串", "创建一场戏和它的讨论串"),
    "Scene name (becomes its folder)": ("場景名稱（也是資料夾名）", "场景名称（也是文件夹名）"),
    "Template to start from": ("從哪個範本開始", "从哪个模板开始"),
    "List the scenes": ("列出所有場景", "列出所有场景"),
    "Bind an existing scene to a new thread": (
        "把現有場景接到新的討論串",
        "把现有场景接到新的讨论串",
    ),
    "The scene's folder name": ("場景資料夾名稱", "场景文件夹名称"),
    "Let the scene play by itself for N turns": ("讓這場戲自己走 N 輪", "让这场戏自己走 N 轮"),
    "How many turns (1–50)": ("幾輪（1–50）", "几轮（1–50）"),
    "Who speaks first": ("誰先開口", "谁先开口"),
    "Give one actor the next turn": ("把下一輪交給一位演員", "把下一轮交给一位演员"),
    "The actor": ("演員", "演员"),
    "A private direction for this turn only": ("只給這一輪的私下指示", "只给这一轮的私下指示"),
    "Stop the run now": ("立刻停下排練", "立刻停下排练"),
    "Play on from where the scene stopped": ("從停下的地方繼續", "从停下的地方继续"),
    "How many turns": ("幾輪", "几轮"),
    "Whisper to every actor, or to one": ("對全體或某位演員耳語", "对全体或某位演员耳语"),
    "What to whisper": ("耳語內容", "耳语内容"),
    "Only this actor hears it (default: everyone)": (
        "只讓這位演員聽到（預設：全體）",
        "只让这位演员听到（默认：全体）",
    ),
    "Save and browse takes": ("保存與瀏覽每一條", "保存与浏览每一条"),
    "Save the current take": ("保存目前這一條", "保存当前这一条"),
    "List the saved takes": ("列出已保存的條", "列出已保存的条"),
    "Start again from a saved take": ("從保存的某一條重來", "从保存的某一条重来"),
    "The take number": ("第幾條", "第几条"),
    "Keep turns up to this one (default: all)": (
        "保留到第幾輪（預設：全部）",
        "保留到第几轮（默认：全部）",
    ),
    "Read or rewrite an actor's soul.md": ("讀取或改寫演員的 soul.md", "读取或改写演员的 soul.md"),
    "Show an actor's soul.md (privately)": (
        "私下顯示演員的 soul.md",
        "私下显示演员的 soul.md",
    ),
    "Edit an actor's soul.md": ("編輯演員的 soul.md", "编辑演员的 soul.md"),
    "A replacement soul.md (for souls over 4000 characters)": (
        "替換用的 soul.md（超過 4000 字時用）",
        "替换用的 soul.md（超过 4000 字时用）",
    ),
    "Cast, turns, mode, tokens and cost": (
        "演員、輪數、狀態、token 與費用",
        "演员、轮数、状态、token 与费用",
    ),
    "List the picked lines and their votes (privately)": (
        "列出精選台詞與票數（只有你看得到）",
        "列出精选台词与票数（只有你看得到）",
    ),
    "Compare two takes": ("比較兩條", "比较两条"),
    "Show the shared opening in full too": ("共同的開頭也完整列出", "共同的开头也完整列出"),
    "A take number, or current": ("條數，或 current（目前這條）", "条数，或 current（当前这条）"),
    "Export a take as a screenplay, a storyboard or a script": (
        "把一條匯出成劇本、分鏡表或文字稿",
        "把一条导出成剧本、分镜表或文字稿",
    ),
    "Which files (default: all four)": ("哪些檔案（預設：全部四種）", "哪些文件（默认：全部四种）"),
    "all four": ("全部四種", "全部四种"),
    "Fountain screenplay (.fountain)": ("Fountain 劇本（.fountain）", "Fountain 剧本（.fountain）"),
    "Final Draft (.fdx)": ("Final Draft 劇本（.fdx）", "Final Draft 剧本（.fdx）"),
    "Readable script (.md)": ("好讀的文字稿（.md）", "好读的文字稿（.md）"),
    "Storyboard (.csv)": ("分鏡表（.csv）", "分镜表（.csv）"),
    "Only the picked lines": ("只匯出精選台詞", "只导出精选台词"),
    "With the actors' thoughts as notes (directors only)": (
        "附上演員心聲作為註記（限導演）",
        "附上演员心声作为注记（限导演）",
    ),
    "A take's report: who spoke, how, and whether the voices converge": (
        "一條的報告：誰說話、怎麼輪到的、聲音是否趨同",
        "一条的报告：谁说话、怎么轮到的、声音是否趋同",
    ),
    "Share the director's chair": ("共享導演椅", "共享导演椅"),
    "Make someone a co-director": ("讓某人成為共同導演", "让某人成为共同导演"),
    "Remove a co-director": ("移除一位共同導演", "移除一位共同导演"),
    "The member": ("成員", "成员"),
    # --- discord: setting a scene up from Discord (/scene new cast, /scene context|backstory, /actor)
    "A blank scene with these actors, comma-separated (instead of a template)": (
        "只有這些演員的空白場景，用逗號分隔（取代範本）",
        "只有这些演员的空白场景，用逗号分隔（取代模板）",
    ),
    "The blank scene's language (default: yours if Chinese, else the names')": (
        "空白場景的語言（預設：你的 Discord 是中文就用中文，否則看名字）",
        "空白场景的语言（默认：你的 Discord 是中文就用中文，否则看名字）",
    ),
    "Rewrite the scene's public context": ("改寫這場戲的公開場景", "改写这场戏的公开场景"),
    "A replacement context.md (for a context over 4000 characters)": (
        "替換用的 context.md（超過 4000 字時用）",
        "替换用的 context.md（超过 4000 字时用）",
    ),
    "Draft each actor's prior story from one backstory": (
        "從一份完整背景替每位演員擬前期劇本",
        "从一份完整背景替每位演员拟前期剧本",
    ),
    "The full backstory (a text file): what really happened": (
        "完整背景（文字檔）：真正發生了什麼",
        "完整背景（文本文件）：真正发生了什么",
    ),
    "Add, remove or rename the scene's actors": (
        "新增、移除或改名這場戲的演員",
        "新增、移除或改名这场戏的演员",
    ),
    "Add an actor: a form for their bio, prior story and director's notes": (
        "新增演員：填寫角色小傳、前期劇本與導戲筆記",
        "新增演员：填写角色小传、前期剧本与导戏笔记",
    ),
    "The new actor's name": ("新演員的名字", "新演员的名字"),
    "Their whole soul.md instead of the form (for souls over 4000 characters)": (
        "用整份 soul.md 取代表單（超過 4000 字時用）",
        "用整份 soul.md 取代表单（超过 4000 字时用）",
    ),
    "Take an actor out of the scene": ("讓一位演員離開這場戲", "让一位演员离开这场戏"),
    "Rename an actor (before the take's first turn)": (
        "替演員改名（這一條的第一輪之前）",
        "替演员改名（这一条的第一轮之前）",
    ),
    "Their new name": ("新名字", "新名字"),
}


class CommandTranslator(app_commands.Translator):
    """Gives Discord the Chinese text of every command and option description."""

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        pair = COMMAND_TEXT.get(string.message)
        if pair is None:
            return None
        if locale == Locale.taiwan_chinese:
            return pair[0]
        if locale == Locale.chinese:
            return pair[1]
        return None
