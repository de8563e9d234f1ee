"""Every sentence the bot says, in English and Chinese, and the slash commands' localisations.

Replies follow the scene's `language` (anything starting with "zh" is Chinese, else English);
outside a scene they follow the user's Discord locale. Command and option descriptions are
written in English and carry zh-TW / zh-CN translations that Discord shows per user.
A key missing in one language falls back to English; a missing key is a bug (KeyError).
"""

from __future__ import annotations

from discord import Locale, app_commands

ZH, EN = "zh", "en"


def lang_of(language: str | None) -> str:
    """The reply language for a scene's `language` setting or a Discord locale string."""
    return ZH if str(language or "").lower().startswith("zh") else EN


# key -> (English, Chinese). Placeholders use str.format names.
STRINGS: dict[str, tuple[str, str]] = {
    # --- where and who
    "not_in_scene": (
        "This command works inside a scene thread. Start one with `/scene new` or bind an "
        "existing scene with `/scene open`.",
        "這個指令要在場景討論串裡用。先用 `/scene new` 開一場戲，或用 `/scene open` 接上現有的場景。",
    ),
    "not_director": (
        "Only this scene's directors can do that ({directors}). Ask one of them to "
        "`/director add` you — everyone else is welcome to watch.",
        "只有這場戲的導演可以這麼做（{directors}）。請其中一位用 `/director add` 加你——其他人歡迎旁觀。",
    ),
    "nobody": ("nobody", "無"),
    "scene_broken": (
        "This scene can't be loaded; its directors have the details.",
        "這場戲目前無法載入；細節請洽它的導演。",
    ),
    "scene_unknown": (
        "There is no scene called **{scene}** — `/scene list` shows the scenes you can open.",
        "沒有叫 **{scene}** 的場景——用 `/scene list` 看看可以開啟哪些場景。",
    ),
    "scene_elsewhere": (
        "**{scene}** belongs to another server; only its directors can open it here.",
        "**{scene}** 屬於另一個伺服器；只有它的導演可以在這裡開啟。",
    ),
    "need_text_channel": (
        "Use `/scene new` in a text channel: the scene gets its own thread there.",
        "請在文字頻道裡用 `/scene new`：這場戲會在那裡開一個自己的討論串。",
    ),
    # --- scenes
    "scene_created": (
        "Scene **{scene}** is ready in {thread}. You direct it — try `/run turns:5` there.",
        "場景 **{scene}** 已在 {thread} 準備好。你是導演——到那裡試試 `/run turns:5`。",
    ),
    "scene_opened": (
        "Scene **{scene}** now plays in {thread}.",
        "場景 **{scene}** 現在在 {thread} 上演。",
    ),
    "scene_list": ("Scenes:\n{lines}", "場景：\n{lines}"),
    "scene_list_none": (
        "No scenes yet — create one with `/scene new`.",
        "還沒有場景——用 `/scene new` 開一場。",
    ),
    "scene_unbound": ("not in a thread", "尚未接上討論串"),
    "scene_card_context": ("**Scene: {scene}**", "**場景：{scene}**"),
    "scene_card_cast": ("**Cast:** {cast}", "**演員：** {cast}"),
    "scene_card_footer": (
        "-# Directors: {directors} · actors post here; their thoughts go to the directors by DM.",
        "-# 導演：{directors} · 演員在這裡演出；他們的心聲私訊給導演。",
    ),
    # --- running
    "run_started": (
        "▶ Running {turns} turns{start}.",
        "▶ 開始排練 {turns} 輪{start}。",
    ),
    "run_from": (" starting with {actor}", "，由 {actor} 開始"),
    "resume_started": ("▶ Resuming for {turns} turns.", "▶ 繼續排練 {turns} 輪。"),
    "cue_started": ("🎯 {actor} takes the next turn.", "🎯 下一輪交給 {actor}。"),
    "cue_direction": (
        " Your direction goes to {actor} only.",
        "你的指示只有 {actor} 看得到。",
    ),
    "cut_done": ("✂ Cut.", "✂ 卡！"),
    "cut_nothing": ("Nothing is running.", "現在沒有在排練。"),
    "busy": (
        "**{scene}** is already running — wait for it to finish, or `/cut` it first.",
        "**{scene}** 正在排練中——等它結束，或先 `/cut`。",
    ),
    "unknown_actor": (
        "No actor called {name} in this scene — the cast is {cast}.",
        "這場戲沒有叫 {name} 的演員——演員有：{cast}。",
    ),
    # --- notes, takes, replay
    "note_all": ("📝 Note whispered to everyone.", "📝 已對全體演員耳語。"),
    "note_actor": ("📝 Note whispered to {actor}.", "📝 已對 {actor} 耳語。"),
    "take_saved": ("🎬 Saved as take {take}.", "🎬 已存為第 {take} 條。"),
    "take_list": ("Takes:\n{lines}", "已存的條：\n{lines}"),
    "take_line": ("**take {n}** · {turns} turns · {last}", "**第 {n} 條** · {turns} 輪 · {last}"),
    "take_list_none": (
        "No takes saved yet — `/take save` keeps the current one.",
        "還沒有存任何一條——用 `/take save` 保存目前這條。",
    ),
    "replay_done": (
        "⏮ From take {from_take} up to turn {kept}: this is now take {take}. `/resume` to play on.",
        "⏮ 從第 {from_take} 條的第 {kept} 輪重來：現在是第 {take} 條。用 `/resume` 繼續。",
    ),
    "replay_autosaved": (
        " (Your unsaved work was kept as take {n}.)",
        "（尚未保存的內容已存為第 {n} 條。）",
    ),
    # --- harvest: picks, compare, export, report (bot.harvest, bot.reports)
    "take_current": ("current (take {n})", "目前（第 {n} 條）"),
    "take_saved_choice": ("take {n} · {turns} turns", "第 {n} 條 · {turns} 輪"),
    "bad_take": (
        "“{value}” is not a take — give a take number, or `current` for the one being played.",
        "「{value}」不是哪一條——請給條數，或用 `current` 表示正在排的這一條。",
    ),
    "picks_none": (
        "No picks yet — star an actor's line in the thread (⭐) to vote for it.",
        "還沒有精選——在討論串裡對演員的台詞按 ⭐，就是投它一票。",
    ),
    "picks_list": ("**Picks** ({count}):\n{lines}", "**精選台詞**（{count} 條）：\n{lines}"),
    "picks_line": (
        "take {take} · turn {turn} · **{actor}** ⭐ {votes} — {line}{who}",
        "第 {take} 條 · 第 {turn} 輪 · **{actor}** ⭐ {votes} — {line}{who}",
    ),
    "picks_file": (
        "{count} picks — the list is attached (picks.md).",
        "共 {count} 條精選——清單在附件（picks.md）。",
    ),
    "compare_file": (
        "Take {a} and take {b} compared — the comparison is attached.",
        "第 {a} 條與第 {b} 條的比較在附件裡。",
    ),
    "export_done": ("📤 Take {take}: {files}", "📤 第 {take} 條：{files}"),
    "export_picks_done": ("📤 The picked lines: {files}", "📤 精選台詞：{files}"),
    "export_thoughts_directors": (
        "Only this scene's directors can export the actors' thoughts ({directors}) — "
        "export without `thoughts`, or ask a director.",
        "只有這場戲的導演可以匯出演員的心聲（{directors}）——不勾 `thoughts` 再匯出，或請導演匯出。",
    ),
    "report_title": ("{scene} · take {take} report", "{scene} · 第 {take} 條報告"),
    "report_done": ("📊 The report of take {take} is attached.", "📊 第 {take} 條的報告在附件裡。"),
    "report_dm": (
        "📊 Take {take} of **{scene}** is saved — its report is attached.",
        "📊 **{scene}** 第 {take} 條已保存——報告在附件裡。",
    ),
    "report_turns": ("Turns", "輪數"),
    "report_picks": ("Picks", "精選"),
    "report_actor": (
        "{turns} turns · {lines} lines · {words} words",
        "{turns} 輪 · {lines} 句 · {words} 字",
    ),
    "report_no_warning": ("No sign of the voices converging.", "沒有聲音趨同的跡象。"),
    # --- souls
    "soul_title": ("Soul of {actor}", "{actor} 的角色靈魂"),
    "soul_label": ("soul.md", "soul.md"),
    "soul_saved": ("✍ {actor}'s soul is saved.", "✍ 已保存 {actor} 的角色靈魂。"),
    "soul_file": (
        "{actor}'s soul.md is attached.",
        "附上 {actor} 的 soul.md。",
    ),
    "soul_too_long": (
        "{actor}'s soul.md is {length} characters, longer than a form holds (4000), so here it "
        "is as a file. Edit it, then upload it with `/soul edit actor:{actor} file:`.",
        "{actor} 的 soul.md 有 {length} 字，超過表單上限（4000），所以以檔案附上。"
        "修改後用 `/soul edit actor:{actor} file:` 上傳。",
    ),
    "soul_bad_file": (
        "`{file}` is not UTF-8 text — save it as UTF-8 (most editors: Save with Encoding → "
        "UTF-8) and upload it again. Nothing was written.",
        "`{file}` 不是 UTF-8 文字——請另存為 UTF-8（多數編輯器：以編碼儲存 → UTF-8）再上傳。"
        "沒有寫入任何東西。",
    ),
    "soul_file_too_big": (
        "`{file}` is {size} bytes; a soul.md upload may be at most {limit}. Nothing was written.",
        "`{file}` 有 {size} 位元組；上傳的 soul.md 最多 {limit} 位元組。沒有寫入任何東西。",
    ),
    # --- status
    "status": (
        "**{scene}** · take {take} · {turns} turns · {mode}\n"
        "Cast: {cast}\nSaved takes: {takes}\n"
        "Model calls: {calls} · tokens {prompt} in / {completion} out · cost {cost}",
        "**{scene}** · 第 {take} 條 · {turns} 輪 · {mode}\n"
        "演員：{cast}\n已存的條：{takes}\n"
        "模型呼叫：{calls} 次 · token 輸入 {prompt} / 輸出 {completion} · 費用 {cost}",
    ),
    "status_stage": (
        "On stage: {on_stage}{players}",
        "在場：{on_stage}{players}",
    ),
    "status_played": (" · {actor} played by {player}", "・{actor} 由 {player} 扮演"),
    "status_turn_marks": (
        "Turns repaired by a re-ask: {repairs} · turns a stand-in played (unreadable reply): "
        "{fallbacks}",
        "重問後修好的輪：{repairs} · 回覆無法解析、以替代動作代演的輪：{fallbacks}",
    ),
    "status_budget_scene": (
        "Scene budget ({setting}): {spent} of {limit} spent · {left} left",
        "這場戲的預算（{setting}）：{limit} 已花 {spent} · 剩 {left}",
    ),
    "status_budget_day": (
        "This server's budget today (UTC, {setting}): {spent} of {limit} spent · {left} left",
        "本伺服器今天的預算（UTC，{setting}）：{limit} 已花 {spent} · 剩 {left}",
    ),
    "mode_idle": ("idle", "待機"),
    "mode_running": ("running ({progress})", "排練中（{progress}）"),
    "none": ("none", "無"),
    # --- directors
    "director_added": (
        "{user} now co-directs **{scene}** and will get the actors' thoughts by DM.",
        "{user} 現在是 **{scene}** 的導演之一，會收到演員心聲的私訊。",
    ),
    "director_removed": (
        "{user} no longer directs **{scene}**.",
        "{user} 不再是 **{scene}** 的導演。",
    ),
    "director_already": (
        "{user} already directs **{scene}**.",
        "{user} 已經是 **{scene}** 的導演。",
    ),
    "director_not": (
        "{user} is not a director of **{scene}**.",
        "{user} 不是 **{scene}** 的導演。",
    ),
    "director_last": (
        "{user} is the last director of **{scene}** — add another one first.",
        "{user} 是 **{scene}** 最後一位導演——請先加另一位。",
    ),
    "director_bot": ("A bot cannot direct a scene.", "機器人不能當導演。"),
    # --- backstage
    "dms_closed": (
        "I could not DM you the actors' thoughts for **{scene}**: your direct messages are "
        "closed. To get them, open this server's menu → Privacy Settings → turn on Direct "
        "Messages (or User Settings → Privacy & Safety). Nothing was posted in the thread; the "
        "thoughts stay on disk in `backstage/`.",
        "無法私訊你 **{scene}** 演員的心聲：你關閉了私訊。要收到心聲，請打開伺服器選單 → "
        "隱私設定 → 開啟「私人訊息」（或 使用者設定 → 隱私與安全）。討論串裡沒有貼出任何東西；"
        "心聲都保存在磁碟上的 `backstage/`。",
    ),
    "sm_decided": ("stage manager → {actor}: {reason}", "舞台監督 → {actor}：{reason}"),
    "mark_repaired": (
        "🔧 repaired: the model's first reply was malformed; it was asked again",
        "🔧 修復過：模型第一次的回覆格式不對，已重新要求一次",
    ),
    "mark_fallback": (
        "⚠ fallback: the model gave no usable reply, even when asked again — Circus played this "
        "turn (a silence unless something parsed); the actor did not choose it",
        "⚠ 代演：模型重問後仍沒有可用的回覆——這一輪由 Circus 代為處理（能解析的保留，否則沉默），"
        "不是演員自己的選擇",
    ),
    "mark_cut": ("✂ cut at its cap: {fields}", "✂ 超過長度上限已截斷：{fields}"),
    "mark_cut_reply": ("the whole reply (too long)", "整個回覆（太長）"),
    "mark_cut_field": ("{field} at {cap} characters", "{field}（{cap} 字）"),
    "run_error_dm": (
        "⚠ **{scene}** turn {turn}{actor}: {message}",
        "⚠ **{scene}** 第 {turn} 輪{actor}：{message}",
    ),
    # --- thread status lines (public, never private text)
    "line_cut": ("-# ✂ cut after turn {turn}", "-# ✂ 卡！停在第 {turn} 輪"),
    "line_finished": (
        "-# ■ take {take}: {done} turns — `/resume` to play on, `/take save` to keep it",
        "-# ■ 第 {take} 條：{done} 輪——`/resume` 繼續，`/take save` 保存",
    ),
    "line_error": (
        "-# ⚠ the run stopped on an error — the directors have the details",
        "-# ⚠ 排練因錯誤停下——細節已私訊導演",
    ),
    "line_budget": (
        "-# 💰 the run stopped before crossing its budget — the directors have the details",
        "-# 💰 排練在超出預算前停下——細節已私訊導演",
    ),
    "line_shutdown": (
        "-# ⏹ the bot is stopping: the run was cut after turn {turn} — `/resume` once it is back",
        "-# ⏹ 機器人正在關閉：排練停在第 {turn} 輪——機器人回來後用 `/resume` 繼續",
    ),
    "shutdown_dm": (
        "⏹ **{scene}**: the bot was stopped by its operator, so the run was cut after turn "
        "{turn}. Every turn in the transcript is whole; `/resume` once the bot is back.",
        "⏹ **{scene}**：機器人被管理者關閉，排練停在第 {turn} 輪。劇本裡每一輪都是完整的；"
        "機器人回來後用 `/resume` 繼續。",
    ),
    "line_take_saved": (
        "-# 🎬 take {take} saved · {turns} turns",
        "-# 🎬 第 {take} 條已保存 · {turns} 輪",
    ),
    "line_replay": (
        "-# ⏮ replaying take {from_take} up to turn {kept} — this is take {take}",
        "-# ⏮ 從第 {from_take} 條的第 {kept} 輪重來——這是第 {take} 條",
    ),
    "anyone": ("anyone", "任何人"),
    "silence": ("(silence)", "（沉默）"),
    # --- Discord trouble, actionable
    "missing_permission": (
        "I am missing a permission in {channel}: {what}. Ask a server admin to give my role "
        "Manage Webhooks, Create Public Threads and Send Messages in Threads there, then try again.",
        "我在 {channel} 缺少權限：{what}。請伺服器管理員給我的身分組「管理 Webhook」、"
        "「建立公開討論串」和「在討論串中傳送訊息」權限，然後再試一次。",
    ),
    "post_failed": (
        "I could not post turn {turn} of **{scene}** into its thread: {why}. The turn is saved on "
        "disk; fix the problem and `/scene open` the scene again if the thread is gone.",
        "無法把 **{scene}** 第 {turn} 輪貼到討論串：{why}。這一輪已保存在磁碟上；"
        "修正問題後，如果討論串不見了，請再 `/scene open` 一次。",
    ),
    "webhook_full": (
        "{channel} already has 15 webhooks, Discord's maximum. Delete one in Channel Settings → "
        "Integrations, then try again.",
        "{channel} 已有 15 個 Webhook（Discord 上限）。請到 頻道設定 → 整合 刪掉一個再試。",
    ),
    "unexpected": (
        "Something went wrong on my side ({error}). Nothing was changed; try again.",
        "我這邊出了問題（{error}）。沒有任何改變；請再試一次。",
    ),
}


def t(key: str, lang: str, **values: object) -> str:
    """The sentence `key` in `lang` ("zh" or "en"), filled with `values`."""
    en, zh = STRINGS[key]
    text = zh if lang_of(lang) == ZH and zh else en
    return text.format(**values) if values else text


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
