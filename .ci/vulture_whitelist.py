"""Names vulture (pyproject [tool.vulture]) cannot see used: each line "uses" one name.

Only two kinds belong here: names a library or framework reads or calls by name, and names
the tests or benches use (vulture reads the product only). Dead code does not: remove it.
"""

# ruff: noqa: B018, F821
# fmt: off

# --- set for a library to read ---------------------------------------------------------
_.guilds  # discord.Intents flags (bot/app.py)
_.guild_reactions
_.BASE  # discord.http.Route (bot/app.py point_at)
_.DEFAULT_GATEWAY
_.initial  # discord.Client.before_identify_hook(shard_id, *, initial) (bot/app.py)
_.translate  # app_commands.Translator (bot/i18n.py)
_.transform  # app_commands.Transformer (bot/interaction/options.py)
_.required  # argparse subparsers (circus/cli.py)
_.telemetry  # litellm module settings (engine/door/boot.py)
_.suppress_debug_info
_.custom_provider_map
_.vocab_only  # llama_cpp model params (engine/providers/vocab.py)
_._requires_eval  # llama_cpp.Llama's own flag (engine/providers/prefix_cache.py)
_.yaml_implicit_resolvers  # PyYAML's resolver table (engine/folder/frontmatter.py)
_.budget_usd  # pydantic fields read through model_dump (engine/folder/setting_schemas.py)
_.narrator_voice  # the table read's settings, read the same way (engine/rehearsal/read_commands.py)
_.thoughts_voice
_.read_model
_.spectators_read
_.budget_tokens
_._warming  # holds the warm-up task so it is not garbage collected (bot/app.py)
_.prior_story  # a dataclass field named by its modal's table (bot/commands/cast.py)
_.exc_text  # logging.Formatter reads a record's exc_text (engine/redact.py)
_.StartDoctypeDeclHandler  # expat parser callbacks (engine/script/fdx.py)
_.EntityDeclHandler
_.ExternalEntityRefHandler
_.StartElementHandler
_.EndElementHandler
_.CharacterDataHandler
_.buffer_text

# --- used by the tests or benches -------------------------------------------------------
_.reactions_seen  # bot/app.py: tests wait on it
_.delivered  # bot/thread/backstage.py
_.forget_saved_prompts  # engine/providers/embedded.py
_.actor_messages  # engine/turn/prompts.py
_.busy  # engine/providers/worker.py
_.queue_depth  # engine/door/metrics.py: a push-style setter the metrics tests drive
_.window_start  # engine/turn/record_memo.py: the window rule, tested by tables
_.rebuilt_prompts  # engine/takes/reading.py: every prompt, the one-walk audit's reference
_.prompt_breaches  # engine/takes/secrets.py: the audit over them (tests/engine/test_continuity_secrets.py)
