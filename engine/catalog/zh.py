"""Chinese (Traditional): every fixed sentence Circus says, to a model or to a person.

The same keys and placeholders as en.py (tests/test_catalog.py checks); the text a Chinese
scene shows and its models read.
"""

TEXT: dict[str, str] = {
    # --- language: list separators and small words
    "list.sep": "、",
    # --- errors (engine/errors.py): what went wrong and what to do next
    "error.bad_name": "不能用「{name}」當{what}名稱：{why}。",
    "error.what.Actor": "角色",
    "error.what.Scene": "場景",
    "error.what.Take": "排演",
    "error.name.not_text": "名稱必須是文字",
    "error.name.empty": "名稱是空的",
    "error.name.dot": "不能以點開頭",
    "error.name.forbidden": "不能包含 / \\ : * ? \" < > |",
    "error.name.control": "不能包含控制字元",
    "error.name.too_long": "超過 64 個字",
    "error.name.reserved": "這是保留字",
    "error.name.everyone": "它在 cue 或耳語標題裡代表「所有人／任何人」",
    "error.name.collides": "和「{other}」衝突",
    "error.scene_not_found": "{path} 不是場景（那裡沒有 context.md）——用 `circus new {path}` 建一個。",
    "error.scene_not_found.relative": "「{scene}」不是場景（那裡沒有 context.md）。",
    "error.scene_exists": "{path} 已經存在——換個名字；什麼都沒寫入。",
    "error.scene_exists.relative": "「{scene}」已經存在——換個名字；什麼都沒寫入。",
    "error.bad_scene_file": "{path}：{why}",
    "error.refused.api_base": "不能從 Discord 設定 `api_base`——模型請求送到哪裡由營運者決定（磁碟上的 soul.md、context.md 或 CIRCUS_API_BASE）。刪掉 api_base 那一行再送一次；什麼都沒寫入。",
    "error.refused.model": "不能從 Discord 設定 `{key}: {shown}`——{allowed}（由營運者以 CIRCUS_ALLOWED_MODELS 設定）。改用其中一個，或刪掉 {key} 那一行；什麼都沒寫入。",
    "error.refused.allowed": "可以用的模型是 {names}",
    "error.refused.none_allowed": "這台伺服器不允許從 Discord 選模型",
    "error.unknown_actor": "這場戲沒有叫「{name}」的角色——在場的是 {cast}。",
    "error.cast_nobody": "（沒有人）",
    "error.scene_busy": "「{scene}」正在排演中——等它跑完，或先喊 CUT。",
    "error.take_not_found": "這場戲沒有排演 {take}——現有：{have}。",
    "error.no_takes_yet": "還沒有（用 take save 存一個）",
    "error.model": "模型 {model} 失敗：{why}。請檢查模型名稱、API 金鑰或 api_base，或在角色的 soul.md 設定 fallback_model。",
    "error.off_stage": "{actor} 不在場上——先用 `enter {actor}` 讓他進場（console：ENTER，Discord：/enter）；什麼都沒寫入。",
    "error.on_stage": "{actor} 已經在場上；什麼都沒寫入。",
    "error.nobody_on_stage": "場上沒有人——先用 `enter 角色` 讓人進場。",
    "error.not_your_turn": "戲正在進行，球不在 {actor} 手上——等輪到你，或請導演喊 CUT；什麼都沒寫入。",
    "error.plays_nobody": "你在這場戲裡沒有扮演任何角色——導演可以用 /play 把角色交給你。",
    "error.not_playing": "只有扮演 {actor} 的人能說他的台詞。",
    "error.budget": "{lead}：{which}{state}。{todo}",
    "error.budget.cannot_start": "排演無法開始",
    "error.budget.stopped": "排演在下一次模型呼叫前停了",
    "error.budget.used_up": "已經用完——{today}已花 {spent}",
    "error.budget.would_cross": "會被超過——{today}已花 {spent}，剩 {left}，這次呼叫最多可能要 {estimate}",
    "error.budget.today": "今天",
    "error.budget.tokens": "{count} 個 token",
    "error.budget.scene": "這場戲的預算（context.md 的 {setting}: {limit}）",
    "error.budget.scene_todo": "要繼續，請調高這場戲 context.md 裡的 {setting}:。",
    "error.budget.day": "這個伺服器每天的預算（{setting} = 每個 UTC 日 {limit}）",
    "error.budget.day_todo": "請等到明天（UTC 00:00），或請機器人的管理者調高預算。",
    "error.turn_not_found": "排演 {take} 有{have}；沒有第 {turn} 輪——什麼都沒改。",
    "error.turn_range": "第 1–{last} 輪",
    "error.no_turns_yet": "還沒有任何一輪",
    "error.not_picked": "排演 {take} 第 {turn} 輪沒有被選{who}——什麼都沒改（用 picks 看精選）。",
    "error.picked_by": "（{by}）",
    "error.unknown_format": "不認得的匯出格式「{name}」——可選 {formats}；什麼都沒寫入。",
    # --- prompts (engine/prompts.py): what each model is told
    "prompt.rules": (
        "你是即興劇排演中的演員，只扮演「{name}」。留在角色裡，不要跳出角色評論，不要替別人說話或行動。\n"
        "每次輪到你，依序輸出四個標籤，標籤裡只寫角色的內容：\n"
        "<thought>…</thought> 內心獨白，必填；只有你自己和導演看得到\n"
        "<action>…</action> 看得見的動作；動作與台詞至少要有一個，沉默也是動作\n"
        "<dialogue>…</dialogue> 說出口的台詞，可省略\n"
        "<cue>…</cue> 下一位說話者的名字；誰都可以就寫 ANY；可留空\n"
        "別人看不到你的內心、你的角色設定和導演私下給你的話。\n"
        "戲的紀錄裡，每個人的動作和台詞都放在引號裡（換行寫成 \\n）；你回覆時照常寫在標籤裡，不用加引號。"
    ),
    "prompt.enters": "{at} （{actor} 進場）",
    "prompt.exits": "{at} （{actor} 退場）",
    "prompt.event": "{at} 〔事件〕 {text}",
    "prompt.opening": "{at} 〔開場〕 {text}",
    "prompt.present": "{at} （在場：{names}）",
    "prompt.missed": "（你不在場的時候，過了 {turns} 輪。）",
    "prompt.thought_then": "（你當時的內心）",
    "prompt.your_character": (
        "# 你的角色（只有你知道）\n"
        "{soul}"
    ),
    "prompt.public_stage": (
        "# 舞台（所有人都知道的事實）\n"
        "{context}"
    ),
    "prompt.on_stage": (
        "# 在場角色\n"
        "{cast}"
    ),
    "prompt.note_everyone": "導演對全體的耳語：{note}",
    "prompt.note_you": "導演只對你說：{note}",
    "prompt.direction": "導演指示你這一輪：{direction}",
    "prompt.neglected": "你已經沉默很久了，可以選擇說話或繼續保持沉默。",
    "prompt.your_turn": "輪到你了，{name}。請用四個標籤回覆。",
    "prompt.scene_so_far": "# 到目前為止的戲",
    "prompt.omitted": "（前 {count} 輪已省略）",
    "prompt.repair": "你的回覆格式有問題：{problems}。請重新回覆，只用 <thought>、<action>、<dialogue>、<cue> 四個標籤。",
    "prompt.sm.system": (
        "你是排演的舞台監督。你只決定下一位由誰接話——誰接最自然。你不寫台詞，不做戲劇判斷。只回答：\n"
        "NEXT: 名字\n"
        "REASON: 一句理由"
    ),
    "prompt.sm.silent_for": "- {actor}（已 {turns} 輪沒說話）",
    "prompt.sm.stage": (
        "# 舞台\n"
        "{context}"
    ),
    "prompt.sm.note_everyone": (
        "# 導演對全體的耳語\n"
        "{note}"
    ),
    "prompt.sm.just_now": (
        "剛剛發生：{what}\n"
        "誰先反應？"
    ),
    "prompt.sm.no_cue": "（空白）",
    "prompt.sm.cued": "{actor} 把球丟給 {cue}。下一位是誰？",
    "prompt.sm.not_started": "戲還沒開始。誰先開口？",
    "prompt.sm.nothing_yet": "（尚未開始）",
    "prompt.sm.reask": "「{said}」不是在場角色。只能從這些名字選一個：{names}。回答 NEXT: 名字",
    "prompt.summarize.system": "你幫編劇整理角色「{actor}」的前期劇本。從導演寫的完整前情中，只挑出{actor}親身經歷、親眼看見或被告知的事，用{actor}的視角寫成一段。{actor}不知道的事一律不寫，也不要暗示。",
    "prompt.summarize.user": (
        "# {actor} 的角色小傳\n"
        "{bio}\n"
        "\n"
        "# 完整前情（全知視角）\n"
        "{history}\n"
        "\n"
        "請寫出{actor}所知道的前期劇本。"
    ),
    "prompt.unreadable": "（這一輪的回覆無法解析）",
    "prompt.raw_reply": (
        "\n"
        "原文：{raw}"
    ),
    "prompt.stays_silent": "（沉默）",
    # --- the record's labels in transcript.md, picks.md, notes.md, soul.md (parsed back in every language)
    "label.action": "動作",
    "label.dialogue": "台詞",
    "label.cue": "cue",
    "label.note": "備註",
    "stage.opening": "開場",
    "stage.event": "事件",
    "stage.enter": "進場",
    "stage.exit": "退場",
    "stage.present": "在場",
    "picks.header": (
        "# 精選台詞\n"
        "\n"
        "從排演裡淘出來的好句子：每一條是某次排演（take）的某一輪，⭐ 是投票的人。\n"
    ),
    "notes.title": "# 導演耳語",
    "notes.everyone": "全體",
    "soul.prior_story": "前期劇本",
    # --- a take's report (engine/report.py)
    "report.title": "# 排演 {take} · {scene}",
    "report.summary": "{turns} 輪 · {lines} 句台詞 · {words} 字 · {state}",
    "report.saved": "已存檔",
    "report.unsaved": "目前這次，尚未存檔",
    "report.actors": "## 角色",
    "report.actors_table": "| 角色 | 輪數 | 台詞 | 字數 | 最長沉默（輪） |",
    "report.chosen": "## 誰怎麼拿到發言權",
    "report.actor": "角色",
    "report.no_turns": "（還沒有任何一輪）",
    "report.models": "## 模型",
    "report.models_table": "| 模型 | 呼叫 | 修補 | 後備 | 輸入 tokens | 輸出 tokens | 費用 |",
    "report.per_role": "### 每個角色的 tokens 與費用",
    "report.roles_table": "| 角色 | 模型 | 輸入 tokens | 輸出 tokens | 費用 |",
    "report.stage_manager": "場記",
    "report.no_calls": "（這次排演沒有模型呼叫紀錄）",
    "report.picks": "## 精選",
    "report.none_yet": "（還沒有）",
    "report.turn": "第 {turn} 輪",
    "report.voices": "## 聲音",
    "report.voices_table": "| 角色 | distinct-2 | 和別人共用的四字片段 |",
    "report.near_repeats": "幾乎重複前面台詞的句子：",
    "report.converging": "{warn} {a}和{b}的聲音越來越像：{a} {share} 的四字片段也出現在{b}的台詞裡。試試給其中一人換個模型（soul.md 的 `model:`），或私下耳語給其中一人一個說話習慣。",
    "report.going_round": "{warn} 有 {count} 句台詞幾乎重複前面說過的話：戲在原地打轉。試試用耳語加壓、給每個角色不同的模型，或從打轉之前重演。",
    "report.cue_graph": "## 誰把球丟給誰",
    "report.no_cues": "（沒有人點名丟球）",
    "report.reason.director_cue": "導演點名",
    "report.reason.cue": "演員 cue",
    "report.reason.self_cue": "自己接",
    "report.reason.neglect": "冷落保護",
    "report.reason.stage_manager": "場記",
    "report.reason.fallback": "後備",
    "report.reason.start": "開場指定",
    "report.reason.played": "真人演出",
    "report.reason.unknown": "沒有紀錄",
    # --- two takes compared (engine/takediff.py)
    "diff.take": "排演 {take}",
    "diff.current": "（目前）",
    "diff.shared.one": "共同開頭：{count} 輪（第 {first}–{last} 輪）。",
    "diff.shared.many": "共同開頭：{count} 輪（第 {first}–{last} 輪）。",
    "diff.last_shared": "最後一個共同的輪次：",
    "diff.no_shared": "沒有共同的開頭。",
    "diff.identical": "兩次排演完全一樣。",
    "diff.part": "從第 {turn} 輪開始分岔。",
    "diff.from_turn": "，第 {turn} 輪起",
    "diff.nothing_more": "（沒有更多）",
    "diff.numbers": "## 數字",
    "diff.turns": "輪數",
    "diff.picks": "精選",
    "diff.lines_words": "台詞／字數",
    # --- exported scripts (engine/export.py)
    "export.picked_lines": "精選台詞",
    "export.take": "排演 {take}",
    "export.ref": "take_{take} · 第 {turn} 輪",
    "export.credit": "馬戲團排演",
    "export.scene": "場次",
    "export.opening": "開場",
    "export.play": "正戲",
    "export.action": "（{action}）",
    "export.speaker": "**{actor}**：{line}",
    "export.thought": "內心",
    "export.header.shot": "鏡號",
    "export.header.scene": "場景",
    "export.header.speaker": "說話人",
    "export.header.addressee": "對象",
    "export.header.action": "動作",
    "export.header.line": "台詞",
    "export.header.shot_size": "建議景別",
    "export.header.duration": "建議時長",
    "export.header.take": "排演",
    "export.header.turn": "輪",
    "export.header.thought": "內心",
    "export.shot.wide": "全景",
    "export.shot.medium": "中景",
    "export.shot.close": "近景",
    # --- the console (circus/render.py)
    "console.enters": "{at} — {actor} 進場 —",
    "console.exits": "{at} — {actor} 退場 —",
    "console.present": "{at} — 在場：{names} —",
    "console.event": "事件",
    "console.opening": "開場",
    # --- the Discord bot's replies, DMs and thread lines (bot/i18n.py t())
    "bot.not_in_scene": "這個指令要在場景討論串裡用。先用 `/scene new` 開一場戲，或用 `/scene open` 接上現有的場景。",
    "bot.not_director": "只有這場戲的導演可以這麼做（{directors}）。請其中一位用 `/director add` 加你——其他人歡迎旁觀。",
    "bot.nobody": "無",
    "bot.scene_broken": "這場戲目前無法載入；細節請洽它的導演。",
    "bot.scene_unknown": "沒有叫 **{scene}** 的場景——用 `/scene list` 看看可以開啟哪些場景。",
    "bot.scene_elsewhere": "**{scene}** 屬於另一個伺服器；只有它的導演可以在這裡開啟。",
    "bot.need_text_channel": "請在文字頻道裡用 `/scene new`：這場戲會在那裡開一個自己的討論串。",
    "bot.scene_created": "場景 **{scene}** 已在 {thread} 準備好。你是導演——到那裡試試 `/run turns:5`。",
    "bot.scene_opened": "場景 **{scene}** 現在在 {thread} 上演。",
    "bot.scene_list": (
        "場景：\n"
        "{lines}"
    ),
    "bot.scene_list_none": "還沒有場景——用 `/scene new` 開一場。",
    "bot.scene_unbound": "尚未接上討論串",
    "bot.scene_card_context": "**場景：{scene}**",
    "bot.scene_card_cast": "**演員：** {cast}",
    "bot.scene_card_footer": "-# 導演：{directors} · 演員在這裡演出；他們的心聲私訊給導演。",
    "bot.run_started": "▶ 開始排練 {turns} 輪{start}。",
    "bot.run_from": "，由 {actor} 開始",
    "bot.resume_started": "▶ 繼續排練 {turns} 輪。",
    "bot.cue_started": "🎯 下一輪交給 {actor}。",
    "bot.cue_direction": "你的指示只有 {actor} 看得到。",
    "bot.cut_done": "✂ 卡！",
    "bot.cut_nothing": "現在沒有在排練。",
    "bot.busy": "**{scene}** 正在排練中——等它結束，或先 `/cut`。",
    "bot.unknown_actor": "這場戲沒有叫 {name} 的演員——演員有：{cast}。",
    "bot.note_all": "📝 已對全體演員耳語。",
    "bot.note_actor": "📝 已對 {actor} 耳語。",
    "bot.take_saved": "🎬 已存為第 {take} 條。",
    "bot.take_list": (
        "已存的條：\n"
        "{lines}"
    ),
    "bot.take_line": "**第 {n} 條** · {turns} 輪 · {last}",
    "bot.take_list_none": "還沒有存任何一條——用 `/take save` 保存目前這條。",
    "bot.replay_done": "⏮ 從第 {from_take} 條的第 {kept} 輪重來：現在是第 {take} 條。用 `/resume` 繼續。",
    "bot.replay_autosaved": "（尚未保存的內容已存為第 {n} 條。）",
    "bot.take_current": "目前（第 {n} 條）",
    "bot.take_saved_choice": "第 {n} 條 · {turns} 輪",
    "bot.bad_take": "「{value}」不是哪一條——請給條數，或用 `current` 表示正在排的這一條。",
    "bot.picks_none": "還沒有精選——在討論串裡對演員的台詞按 ⭐，就是投它一票。",
    "bot.picks_list": (
        "**精選台詞**（{count} 條）：\n"
        "{lines}"
    ),
    "bot.picks_line": "第 {take} 條 · 第 {turn} 輪 · **{actor}** ⭐ {votes} — {line}{who}",
    "bot.picks_file": "共 {count} 條精選——清單在附件（picks.md）。",
    "bot.compare_file": "第 {a} 條與第 {b} 條的比較在附件裡。",
    "bot.export_done": "📤 第 {take} 條：{files}",
    "bot.export_picks_done": "📤 精選台詞：{files}",
    "bot.export_thoughts_directors": "只有這場戲的導演可以匯出演員的心聲（{directors}）——不勾 `thoughts` 再匯出，或請導演匯出。",
    "bot.report_title": "{scene} · 第 {take} 條報告",
    "bot.report_done": "📊 第 {take} 條的報告在附件裡。",
    "bot.report_dm": "📊 **{scene}** 第 {take} 條已保存——報告在附件裡。",
    "bot.report_turns": "輪數",
    "bot.report_picks": "精選",
    "bot.report_actor": "{turns} 輪 · {lines} 句 · {words} 字",
    "bot.report_no_warning": "沒有聲音趨同的跡象。",
    "bot.soul_title": "{actor} 的角色靈魂",
    "bot.soul_label": "soul.md",
    "bot.soul_saved": "✍ 已保存 {actor} 的角色靈魂。",
    "bot.soul_file": "附上 {actor} 的 soul.md。",
    "bot.soul_too_long": "{actor} 的 soul.md 有 {length} 字，超過表單上限（4000），所以以檔案附上。修改後用 `/soul edit actor:{actor} file:` 上傳。",
    "bot.soul_bad_file": "`{file}` 不是 UTF-8 文字——請另存為 UTF-8（多數編輯器：以編碼儲存 → UTF-8）再上傳。沒有寫入任何東西。",
    "bot.soul_file_too_big": "`{file}` 有 {size} 位元組；上傳的 soul.md 最多 {limit} 位元組。沒有寫入任何東西。",
    "bot.status": (
        "**{scene}** · 第 {take} 條 · {turns} 輪 · {mode}\n"
        "演員：{cast}\n"
        "已存的條：{takes}\n"
        "模型呼叫：{calls} 次 · token 輸入 {prompt} / 輸出 {completion} · 費用 {cost}"
    ),
    "bot.status_stage": "在場：{on_stage}{players}",
    "bot.status_played": "・{actor} 由 {player} 扮演",
    "bot.status_turn_marks": "重問後修好的輪：{repairs} · 回覆無法解析、以替代動作代演的輪：{fallbacks}",
    "bot.status_budget_scene": "這場戲的預算（{setting}）：{limit} 已花 {spent} · 剩 {left}",
    "bot.status_budget_day": "本伺服器今天的預算（UTC，{setting}）：{limit} 已花 {spent} · 剩 {left}",
    "bot.mode_idle": "待機",
    "bot.mode_running": "排練中（{progress}）",
    "bot.none": "無",
    "bot.director_added": "{user} 現在是 **{scene}** 的導演之一，會收到演員心聲的私訊。",
    "bot.director_removed": "{user} 不再是 **{scene}** 的導演。",
    "bot.director_already": "{user} 已經是 **{scene}** 的導演。",
    "bot.director_not": "{user} 不是 **{scene}** 的導演。",
    "bot.director_last": "{user} 是 **{scene}** 最後一位導演——請先加另一位。",
    "bot.director_bot": "機器人不能當導演。",
    "bot.dms_closed": "無法私訊你 **{scene}** 演員的心聲：你關閉了私訊。要收到心聲，請打開伺服器選單 → 隱私設定 → 開啟「私人訊息」（或 使用者設定 → 隱私與安全）。討論串裡沒有貼出任何東西；心聲都保存在磁碟上的 `backstage/`。",
    "bot.sm_decided": "舞台監督 → {actor}：{reason}",
    "bot.mark_repaired": "🔧 修復過：模型第一次的回覆格式不對，已重新要求一次",
    "bot.mark_fallback": "⚠ 代演：模型重問後仍沒有可用的回覆——這一輪由 Circus 代為處理（能解析的保留，否則沉默），不是演員自己的選擇",
    "bot.mark_cut": "✂ 超過長度上限已截斷：{fields}",
    "bot.mark_cut_reply": "整個回覆（太長）",
    "bot.mark_cut_field": "{field}（{cap} 字）",
    "bot.run_error_dm": "⚠ **{scene}** 第 {turn} 輪{actor}：{message}",
    "bot.line_cut": "-# ✂ 卡！停在第 {turn} 輪",
    "bot.line_finished": "-# ■ 第 {take} 條：{done} 輪——`/resume` 繼續，`/take save` 保存",
    "bot.line_error": "-# ⚠ 排練因錯誤停下——細節已私訊導演",
    "bot.line_budget": "-# 💰 排練在超出預算前停下——細節已私訊導演",
    "bot.line_shutdown": "-# ⏹ 機器人正在關閉：排練停在第 {turn} 輪——機器人回來後用 `/resume` 繼續",
    "bot.shutdown_dm": "⏹ **{scene}**：機器人被管理者關閉，排練停在第 {turn} 輪。劇本裡每一輪都是完整的；機器人回來後用 `/resume` 繼續。",
    "bot.line_take_saved": "-# 🎬 第 {take} 條已保存 · {turns} 輪",
    "bot.line_replay": "-# ⏮ 從第 {from_take} 條的第 {kept} 輪重來——這是第 {take} 條",
    "bot.anyone": "任何人",
    "bot.silence": "（沉默）",
    "bot.missing_permission": "我在 {channel} 缺少權限：{what}。請伺服器管理員給我的身分組「管理 Webhook」、「建立公開討論串」和「在討論串中傳送訊息」權限，然後再試一次。",
    "bot.post_failed": "無法把 **{scene}** 第 {turn} 輪貼到討論串：{why}。這一輪已保存在磁碟上；修正問題後，如果討論串不見了，請再 `/scene open` 一次。",
    "bot.webhook_full": "{channel} 已有 15 個 Webhook（Discord 上限）。請到 頻道設定 → 整合 刪掉一個再試。",
    "bot.unexpected": "我這邊出了問題（{error}）。沒有任何改變；請再試一次。",
    "bot.thought_label": "🎭 **{scene}** · 第 {take} 條 · 第 {turn} 輪 · **{actor}**",
    "bot.tokens": "{count} token",
    # --- the bot's stage lines (bot/stagecraft.py say_text())
    "bot.stage.persona": "🎭 舞台",
    "bot.stage.enter": "*{actor} 進場。*",
    "bot.stage.exit": "*{actor} 退場。*",
    "bot.stage.event": "**〔事件〕** {text}",
    "bot.stage.opening": (
        "**〔開場〕**\n"
        "{text}"
    ),
    "bot.stage.present": "*在場：{names}*",
    "bot.stage.waiting": "⏳ 戲在等 **{actor}**——{mention}，輪到你了：用 `/say`",
    "bot.stage.entered": "{actor} 已進場。",
    "bot.stage.exited": "{actor} 已退場。",
    "bot.stage.evented": "事件已記錄。",
    "bot.stage.played": "{user} 現在扮演 {actor}：他的台詞只來自 `/say`，不會由模型寫。",
    "bot.stage.unplayed": "{actors}：交還給模型。",
    "bot.stage.unplayed_none": "沒有要交還的角色。",
    "bot.stage.said": "已用 {actor} 的身分說出。",
    "bot.stage.said_waiting": "已用 {actor} 的身分說出；戲繼續。",
    "bot.stage.play_bot": "機器人不能扮演角色。",
}
