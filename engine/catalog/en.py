"""English: every fixed sentence Circus says, to a model or to a person (key -> template).

Templates are str.format strings; zh.py has exactly the same keys and placeholders.
"""

TEXT: dict[str, str] = {
    # --- language: list separators and small words
    "list.sep": ", ",
    # --- errors (engine/errors.py): what went wrong and what to do next
    "error.bad_name": "{what} name {name!r} is not allowed: {why}.",
    "error.what.Actor": "Actor",
    "error.what.Scene": "Scene",
    "error.what.Take": "Take",
    "error.name.not_text": "it must be text",
    "error.name.empty": "it is empty",
    "error.name.dot": "it may not start with a dot",
    "error.name.forbidden": "it may not contain / \\ : * ? \" < > |",
    "error.name.control": "it may not contain control characters",
    "error.name.too_long": "it is longer than 64 characters",
    "error.name.reserved": "it is a reserved word",
    "error.name.everyone": "it means everyone (or anyone) in a cue or a whisper heading",
    "error.name.collides": "it collides with {other!r}",
    "error.scene_not_found": "No scene at {path} (no context.md there) — create one with `circus new {path}`.",
    "error.scene_not_found.relative": "{scene} is not a scene (it has no context.md).",
    "error.scene_exists": "{path} already exists — choose another name; nothing was written.",
    "error.scene_exists.relative": "{scene} already exists — choose another name; nothing was written.",
    "error.bad_scene_file": "{path}: {why}",
    "error.refused.api_base": "`api_base` can't be set from Discord — where model requests go is the operator's setting (soul.md on disk, context.md or CIRCUS_API_BASE). Remove the api_base line and send the soul again; nothing was written.",
    "error.refused.model": "`{key}: {shown}` isn't allowed from Discord — {allowed} (the operator sets CIRCUS_ALLOWED_MODELS). Pick one of them or remove the {key} line; nothing was written.",
    "error.refused.allowed": "the allowed models are {names}",
    "error.refused.none_allowed": "no model may be chosen from Discord on this server",
    "error.unknown_actor": "No actor called {name} in this scene — the cast is {cast}.",
    "error.cast_nobody": "(nobody)",
    "error.scene_busy": "Scene {scene} is already running — wait for it to finish or cut it first.",
    "error.take_not_found": "No take {take} in this scene — takes: {have}.",
    "error.no_takes_yet": "none yet (save one with take save)",
    "error.model": "Model {model} failed: {why}. Check the model name, its API key or api_base, or set a fallback_model in the actor's soul.md.",
    "error.off_stage": "{actor} is off stage — bring them in first with `enter {actor}` (console: ENTER, Discord: /enter); nothing was written.",
    "error.on_stage": "{actor} is already on stage; nothing was written.",
    "error.nobody_on_stage": "Nobody is on stage — bring someone in with `enter ACTOR` first.",
    "error.not_your_turn": "The scene is playing and the ball is not with {actor} — wait until the run waits for you, or ask the director to cut; nothing was written.",
    "error.plays_nobody": "You play nobody in this scene — a director can give you a role with /play.",
    "error.not_playing": "Only the person playing {actor} may speak their lines.",
    "error.budget": "{lead}: {which} {state}. {todo}",
    "error.budget.cannot_start": "The run cannot start",
    "error.budget.stopped": "The run stopped before the next model call",
    "error.budget.used_up": "is used up — {spent} spent{today}",
    "error.budget.would_cross": "would be crossed — {spent} spent{today}, {left} left, and the call may cost up to {estimate}",
    "error.budget.today": " today",
    "error.budget.tokens": "{count} tokens",
    "error.budget.scene": "this scene's budget ({setting}: {limit} in context.md)",
    "error.budget.scene_todo": "To go on, raise {setting}: in the scene's context.md.",
    "error.budget.day": "this server's daily budget ({setting} = {limit} per UTC day)",
    "error.budget.day_todo": "Wait until tomorrow (00:00 UTC), or ask the bot's operator to raise it.",
    "error.turn_not_found": "Take {take} has {have}; there is no turn {turn} — nothing was changed.",
    "error.turn_range": "turns 1–{last}",
    "error.no_turns_yet": "no turns yet",
    "error.not_picked": "Turn {turn} of take {take} is not picked{who} — nothing was changed (`picks` lists the bin).",
    "error.picked_by": " by {by}",
    "error.unknown_format": "Unknown export format {name!r} — choose from {formats}; nothing was written.",
    # --- prompts (engine/prompts.py): what each model is told
    "prompt.rules": (
        "You are an actor in an improvised rehearsal and you play {name} only. Stay in character; never comment on the scene or speak or act for anyone else.\n"
        "Each time it is your turn, write these four tags in order, with only the character's words inside them:\n"
        "<thought>…</thought> inner monologue, required; only you and the director see it\n"
        "<action>…</action> what you visibly do; give an action or a line, silence is an action\n"
        "<dialogue>…</dialogue> what you say aloud, optional\n"
        "<cue>…</cue> who should speak next, by name; ANY for anyone; may be empty\n"
        "Nobody else sees your thoughts, your character notes or the director's private words.\n"
        "In the record, what each person did and said is shown in quotes (line breaks as \\n); write your own turn in the tags as usual, without quotes."
    ),
    "prompt.enters": "{at} ({actor} enters)",
    "prompt.exits": "{at} ({actor} exits)",
    "prompt.event": "{at} [Event] {text}",
    "prompt.opening": "{at} [Opening] {text}",
    "prompt.present": "{at} (On stage: {names})",
    "prompt.missed": "(While you were out, {turns} turns happened.)",
    "prompt.thought_then": "(your private thought then)",
    "prompt.your_character": (
        "# Your character (only you know this)\n"
        "{soul}"
    ),
    "prompt.public_stage": (
        "# The stage (public facts)\n"
        "{context}"
    ),
    "prompt.on_stage": (
        "# On stage\n"
        "{cast}"
    ),
    "prompt.note_everyone": "Director's note to everyone: {note}",
    "prompt.note_you": "Director's note to you only: {note}",
    "prompt.direction": "Direction for this turn: {direction}",
    "prompt.neglected": "You have been silent a long time; you may speak or stay silent.",
    "prompt.your_turn": "It is your turn, {name}. Reply with the four tags.",
    "prompt.scene_so_far": "# The scene so far",
    "prompt.omitted": "(the first {count} turns are omitted)",
    "prompt.repair": "Your reply had a problem: {problems}. Reply again using only the tags <thought>, <action>, <dialogue> and <cue>.",
    "prompt.sm.system": (
        "You are the rehearsal's stage manager. You only decide who picks up next — who would most naturally answer. You never write lines and make no dramatic judgements. Answer only:\n"
        "NEXT: name\n"
        "REASON: one sentence"
    ),
    "prompt.sm.silent_for": "- {actor} (silent for {turns} turns)",
    "prompt.sm.stage": (
        "# The stage\n"
        "{context}"
    ),
    "prompt.sm.note_everyone": (
        "# Director's note to everyone\n"
        "{note}"
    ),
    "prompt.sm.just_now": (
        "Just now: {what}\n"
        "Who reacts first?"
    ),
    "prompt.sm.no_cue": "(nobody)",
    "prompt.sm.cued": "{actor} cued {cue}. Who speaks next?",
    "prompt.sm.not_started": "The scene has not started. Who speaks first?",
    "prompt.sm.nothing_yet": "(nothing yet)",
    "prompt.sm.reask": "“{said}” is not on stage. Pick exactly one of: {names}. Answer NEXT: name",
    "prompt.summarize.system": "You help a screenwriter prepare {actor}'s prior story. From the director's full backstory, keep only what {actor} lived through, saw or was told, written from {actor}'s point of view. Leave out, and do not hint at, anything {actor} does not know.",
    "prompt.summarize.user": (
        "# {actor}'s character\n"
        "{bio}\n"
        "\n"
        "# Full backstory (omniscient)\n"
        "{history}\n"
        "\n"
        "Write the prior story as {actor} knows it."
    ),
    "prompt.unreadable": "(this turn's reply could not be read)",
    "prompt.raw_reply": (
        "\n"
        "Raw reply: {raw}"
    ),
    "prompt.stays_silent": "(stays silent)",
    # --- the record's labels in transcript.md, picks.md, notes.md, soul.md (parsed back in every language)
    "label.action": "Action",
    "label.dialogue": "Line",
    "label.cue": "Cue",
    "label.note": "Note",
    "stage.opening": "Opening",
    "stage.event": "Event",
    "stage.enter": "Enters",
    "stage.exit": "Exits",
    "stage.present": "On stage",
    "picks.header": (
        "# Picks\n"
        "\n"
        "Good lines panned out of the takes: each is one turn of one take; ⭐ marks a vote.\n"
    ),
    "notes.title": "# Director's notes",
    "notes.everyone": "Everyone",
    "soul.prior_story": "Prior story",
    # --- a take's report (engine/report.py)
    "report.title": "# Take {take} · {scene}",
    "report.summary": "{turns} turns · {lines} lines · {words} words · {state}",
    "report.saved": "saved",
    "report.unsaved": "current, not saved yet",
    "report.actors": "## Actors",
    "report.actors_table": "| Actor | Turns | Lines | Words | Longest silence |",
    "report.chosen": "## How each speaker was chosen",
    "report.actor": "Actor",
    "report.no_turns": "(no turns yet)",
    "report.models": "## Models",
    "report.models_table": "| Model | Calls | Repairs | Fallbacks | Prompt tokens | Completion tokens | Cost |",
    "report.per_role": "### Tokens and cost per role",
    "report.roles_table": "| Role | Model | Prompt tokens | Completion tokens | Cost |",
    "report.stage_manager": "stage manager",
    "report.no_calls": "(no model calls recorded for this take)",
    "report.picks": "## Picks",
    "report.none_yet": "(none yet)",
    "report.turn": "turn {turn}",
    "report.voices": "## Voices",
    "report.voices_table": "| Actor | distinct-2 | 4-grams shared with others |",
    "report.near_repeats": "Lines that nearly repeat an earlier line:",
    "report.converging": "{warn} {a} and {b} are starting to sound alike: {share} of {a}'s phrases (4-grams) also occur in {b}'s lines. Try a different model for one of them (`model:` in its soul.md), or whisper a speech habit to one of them.",
    "report.going_round": "{warn} {count} lines nearly repeat an earlier line: the scene is going round in circles. Try a whisper that raises the stakes, a different model per actor, or replay from before the loop.",
    "report.cue_graph": "## Who threw the ball to whom",
    "report.no_cues": "(nobody cued anyone by name)",
    "report.reason.director_cue": "director cue",
    "report.reason.cue": "actor cue",
    "report.reason.self_cue": "self cue",
    "report.reason.neglect": "neglect",
    "report.reason.stage_manager": "stage manager",
    "report.reason.fallback": "fallback",
    "report.reason.start": "run start",
    "report.reason.played": "played by a person",
    "report.reason.unknown": "not recorded",
    # --- two takes compared (engine/takediff.py)
    "diff.take": "take {take}",
    "diff.current": " (current)",
    "diff.shared.one": "Shared opening: {count} turn ({first}–{last}).",
    "diff.shared.many": "Shared opening: {count} turns ({first}–{last}).",
    "diff.last_shared": "The last shared turn:",
    "diff.no_shared": "No shared opening.",
    "diff.identical": "The takes are identical.",
    "diff.part": "They part at turn {turn}.",
    "diff.from_turn": " from turn {turn}",
    "diff.nothing_more": "(nothing more)",
    "diff.numbers": "## Numbers",
    "diff.turns": "turns",
    "diff.picks": "picks",
    "diff.lines_words": "lines / words",
    # --- exported scripts (engine/export.py)
    "export.picked_lines": "picked lines",
    "export.take": "take {take}",
    "export.ref": "take_{take} · turn {turn}",
    "export.credit": "Circus rehearsal",
    "export.scene": "Scene",
    "export.opening": "Opening",
    "export.play": "The play",
    "export.action": "({action})",
    "export.speaker": "**{actor}**: {line}",
    "export.thought": "thought",
    "export.header.shot": "shot",
    "export.header.scene": "scene",
    "export.header.speaker": "speaker",
    "export.header.addressee": "addressee",
    "export.header.action": "action",
    "export.header.line": "line",
    "export.header.shot_size": "shot size",
    "export.header.duration": "duration",
    "export.header.take": "take",
    "export.header.turn": "turn",
    "export.header.thought": "thought",
    "export.shot.wide": "wide",
    "export.shot.medium": "medium",
    "export.shot.close": "close-up",
    # --- the console (circus/render.py)
    "console.enters": "{at} — {actor} enters —",
    "console.exits": "{at} — {actor} exits —",
    "console.present": "{at} — on stage: {names} —",
    "console.event": "Event",
    "console.opening": "Opening",
    # --- the Discord bot's replies, DMs and thread lines (bot/i18n.py t())
    "bot.not_in_scene": "This command works inside a scene thread. Start one with `/scene new` or bind an existing scene with `/scene open`.",
    "bot.not_director": "Only this scene's directors can do that ({directors}). Ask one of them to `/director add` you — everyone else is welcome to watch.",
    "bot.nobody": "nobody",
    "bot.scene_broken": "This scene can't be loaded; its directors have the details.",
    "bot.scene_unknown": "There is no scene called **{scene}** — `/scene list` shows the scenes you can open.",
    "bot.scene_elsewhere": "**{scene}** belongs to another server; only its directors can open it here.",
    "bot.need_text_channel": "Use `/scene new` in a text channel: the scene gets its own thread there.",
    "bot.scene_created": "Scene **{scene}** is ready in {thread}. You direct it — try `/run turns:5` there.",
    "bot.scene_opened": "Scene **{scene}** now plays in {thread}.",
    "bot.scene_list": (
        "Scenes:\n"
        "{lines}"
    ),
    "bot.scene_list_none": "No scenes yet — create one with `/scene new`.",
    "bot.scene_unbound": "not in a thread",
    "bot.scene_card_context": "**Scene: {scene}**",
    "bot.scene_card_cast": "**Cast:** {cast}",
    "bot.scene_card_footer": "-# Directors: {directors} · actors post here; their thoughts go to the directors by DM.",
    "bot.run_started": "▶ Running {turns} turns{start}.",
    "bot.run_from": " starting with {actor}",
    "bot.resume_started": "▶ Resuming for {turns} turns.",
    "bot.cue_started": "🎯 {actor} takes the next turn.",
    "bot.cue_direction": " Your direction goes to {actor} only.",
    "bot.cut_done": "✂ Cut.",
    "bot.cut_nothing": "Nothing is running.",
    "bot.busy": "**{scene}** is already running — wait for it to finish, or `/cut` it first.",
    "bot.unknown_actor": "No actor called {name} in this scene — the cast is {cast}.",
    "bot.note_all": "📝 Note whispered to everyone.",
    "bot.note_actor": "📝 Note whispered to {actor}.",
    "bot.take_saved": "🎬 Saved as take {take}.",
    "bot.take_list": (
        "Takes:\n"
        "{lines}"
    ),
    "bot.take_line": "**take {n}** · {turns} turns · {last}",
    "bot.take_list_none": "No takes saved yet — `/take save` keeps the current one.",
    "bot.replay_done": "⏮ From take {from_take} up to turn {kept}: this is now take {take}. `/resume` to play on.",
    "bot.replay_autosaved": " (Your unsaved work was kept as take {n}.)",
    "bot.take_current": "current (take {n})",
    "bot.take_saved_choice": "take {n} · {turns} turns",
    "bot.bad_take": "“{value}” is not a take — give a take number, or `current` for the one being played.",
    "bot.picks_none": "No picks yet — star an actor's line in the thread (⭐) to vote for it.",
    "bot.picks_list": (
        "**Picks** ({count}):\n"
        "{lines}"
    ),
    "bot.picks_line": "take {take} · turn {turn} · **{actor}** ⭐ {votes} — {line}{who}",
    "bot.picks_file": "{count} picks — the list is attached (picks.md).",
    "bot.compare_file": "Take {a} and take {b} compared — the comparison is attached.",
    "bot.export_done": "📤 Take {take}: {files}",
    "bot.export_picks_done": "📤 The picked lines: {files}",
    "bot.export_thoughts_directors": "Only this scene's directors can export the actors' thoughts ({directors}) — export without `thoughts`, or ask a director.",
    "bot.report_title": "{scene} · take {take} report",
    "bot.report_done": "📊 The report of take {take} is attached.",
    "bot.report_dm": "📊 Take {take} of **{scene}** is saved — its report is attached.",
    "bot.report_turns": "Turns",
    "bot.report_picks": "Picks",
    "bot.report_actor": "{turns} turns · {lines} lines · {words} words",
    "bot.report_no_warning": "No sign of the voices converging.",
    "bot.soul_title": "Soul of {actor}",
    "bot.soul_label": "soul.md",
    "bot.soul_saved": "✍ {actor}'s soul is saved.",
    "bot.soul_file": "{actor}'s soul.md is attached.",
    "bot.soul_too_long": "{actor}'s soul.md is {length} characters, longer than a form holds (4000), so here it is as a file. Edit it, then upload it with `/soul edit actor:{actor} file:`.",
    "bot.soul_bad_file": "`{file}` is not UTF-8 text — save it as UTF-8 (most editors: Save with Encoding → UTF-8) and upload it again. Nothing was written.",
    "bot.soul_file_too_big": "`{file}` is {size} bytes; a soul.md upload may be at most {limit}. Nothing was written.",
    "bot.status": (
        "**{scene}** · take {take} · {turns} turns · {mode}\n"
        "Cast: {cast}\n"
        "Saved takes: {takes}\n"
        "Model calls: {calls} · tokens {prompt} in / {completion} out · cost {cost}"
    ),
    "bot.status_stage": "On stage: {on_stage}{players}",
    "bot.status_played": " · {actor} played by {player}",
    "bot.status_turn_marks": "Turns repaired by a re-ask: {repairs} · turns a stand-in played (unreadable reply): {fallbacks}",
    "bot.status_budget_scene": "Scene budget ({setting}): {spent} of {limit} spent · {left} left",
    "bot.status_budget_day": "This server's budget today (UTC, {setting}): {spent} of {limit} spent · {left} left",
    "bot.mode_idle": "idle",
    "bot.mode_running": "running ({progress})",
    "bot.none": "none",
    "bot.director_added": "{user} now co-directs **{scene}** and will get the actors' thoughts by DM.",
    "bot.director_removed": "{user} no longer directs **{scene}**.",
    "bot.director_already": "{user} already directs **{scene}**.",
    "bot.director_not": "{user} is not a director of **{scene}**.",
    "bot.director_last": "{user} is the last director of **{scene}** — add another one first.",
    "bot.director_bot": "A bot cannot direct a scene.",
    "bot.dms_closed": "I could not DM you the actors' thoughts for **{scene}**: your direct messages are closed. To get them, open this server's menu → Privacy Settings → turn on Direct Messages (or User Settings → Privacy & Safety). Nothing was posted in the thread; the thoughts stay on disk in `backstage/`.",
    "bot.sm_decided": "stage manager → {actor}: {reason}",
    "bot.mark_repaired": "🔧 repaired: the model's first reply was malformed; it was asked again",
    "bot.mark_fallback": "⚠ fallback: the model gave no usable reply, even when asked again — Circus played this turn (a silence unless something parsed); the actor did not choose it",
    "bot.mark_cut": "✂ cut at its cap: {fields}",
    "bot.mark_cut_reply": "the whole reply (too long)",
    "bot.mark_cut_field": "{field} at {cap} characters",
    "bot.run_error_dm": "⚠ **{scene}** turn {turn}{actor}: {message}",
    "bot.line_cut": "-# ✂ cut after turn {turn}",
    "bot.line_finished": "-# ■ take {take}: {done} turns — `/resume` to play on, `/take save` to keep it",
    "bot.line_error": "-# ⚠ the run stopped on an error — the directors have the details",
    "bot.line_budget": "-# 💰 the run stopped before crossing its budget — the directors have the details",
    "bot.line_shutdown": "-# ⏹ the bot is stopping: the run was cut after turn {turn} — `/resume` once it is back",
    "bot.shutdown_dm": "⏹ **{scene}**: the bot was stopped by its operator, so the run was cut after turn {turn}. Every turn in the transcript is whole; `/resume` once the bot is back.",
    "bot.line_take_saved": "-# 🎬 take {take} saved · {turns} turns",
    "bot.line_replay": "-# ⏮ replaying take {from_take} up to turn {kept} — this is take {take}",
    "bot.anyone": "anyone",
    "bot.silence": "(silence)",
    "bot.missing_permission": "I am missing a permission in {channel}: {what}. Ask a server admin to give my role Manage Webhooks, Create Public Threads and Send Messages in Threads there, then try again.",
    "bot.post_failed": "I could not post turn {turn} of **{scene}** into its thread: {why}. The turn is saved on disk; fix the problem and `/scene open` the scene again if the thread is gone.",
    "bot.webhook_full": "{channel} already has 15 webhooks, Discord's maximum. Delete one in Channel Settings → Integrations, then try again.",
    "bot.unexpected": "Something went wrong on my side ({error}). Nothing was changed; try again.",
    "bot.thought_label": "🎭 **{scene}** · take {take} · turn {turn} · **{actor}**",
    "bot.tokens": "{count} tokens",
    # --- the bot's stage lines (bot/stagecraft.py say_text())
    "bot.stage.persona": "🎭 Stage",
    "bot.stage.enter": "*{actor} enters.*",
    "bot.stage.exit": "*{actor} exits.*",
    "bot.stage.event": "**[Event]** {text}",
    "bot.stage.opening": (
        "**[Opening]**\n"
        "{text}"
    ),
    "bot.stage.present": "*On stage: {names}*",
    "bot.stage.waiting": "⏳ The scene waits for **{actor}** — {mention}, your line: `/say`",
    "bot.stage.entered": "{actor} is on stage.",
    "bot.stage.exited": "{actor} has left the stage.",
    "bot.stage.evented": "The event is on the record.",
    "bot.stage.played": "{user} plays {actor} now: their lines come from `/say`, never from a model.",
    "bot.stage.unplayed": "{actors}: back to the model.",
    "bot.stage.unplayed_none": "Nobody to give back.",
    "bot.stage.said": "Said as {actor}.",
    "bot.stage.said_waiting": "Said as {actor}; the scene plays on.",
    "bot.stage.play_bot": "A bot cannot play a character.",
}
