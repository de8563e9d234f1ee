"""docker-compose.yml, the Dockerfile and .env.example agree with each other and with the code.

Docker cannot run here, so this checks everything the files reference: the Dockerfile, the
`circus bot` command, named volumes, healthchecks, and every environment variable — each one
the compose file uses is documented in .env.example and actually read by the code. The
one-shot pull script is run with a fake `ollama` to see what it pulls. The `scale` profile's
shard bots together cover every Discord shard once, and Prometheus scrapes exactly them."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from bot.shards import parse_shard_ids

REPO = Path(__file__).resolve().parents[2]
PROXY_CONFIG = REPO / "deploy" / "litellm" / "config.yaml"
CODE_DIRS = ("engine", "bot", "circus")
# Read by docker compose itself (the uid the bot runs as), never by the code.
COMPOSE_ONLY = {"UID", "GID"}
# Read by litellm, not by our code: where Ollama models go inside the compose network.
READ_BY_LITELLM = {"OLLAMA_API_BASE"}


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))


def env_example() -> dict[str, str]:
    out = {}
    for line in (REPO / ".env.example").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def code_text() -> str:
    return "\n".join(
        p.read_text(encoding="utf-8") for d in CODE_DIRS for p in (REPO / d).rglob("*.py")
    )


def names_used(node: object) -> set[str]:
    """Variable names a compose file refers to: environment keys and $VAR / ${VAR} / $$VAR."""
    found: set[str] = set()
    if isinstance(node, dict):
        env = node.get("environment")
        if isinstance(env, dict):
            found |= set(env)
        elif isinstance(env, list):
            found |= {item.split("=", 1)[0] for item in env}
        for value in node.values():
            found |= names_used(value)
    elif isinstance(node, list):
        for value in node:
            found |= names_used(value)
    elif isinstance(node, str):
        found |= set(re.findall(r"\$\$?\{?([A-Z][A-Z0-9_]*)", node))
    return found


def test_services_and_their_wiring(compose: dict) -> None:
    services = compose["services"]
    assert {"bot", "ollama", "ollama-pull"} <= set(services)

    ollama = services["ollama"]
    assert ollama["image"].startswith("ollama/ollama")
    assert "ollama" in " ".join(ollama["healthcheck"]["test"])
    for service in services.values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if not source.startswith((".", "/")):
                assert source in (compose.get("volumes") or {}), f"undeclared volume {source}"

    pull = services["ollama-pull"]
    assert pull["image"].startswith("ollama/ollama")
    assert "ollama pull" in " ".join(pull["entrypoint"])
    assert pull["depends_on"]["ollama"]["condition"] == "service_healthy"
    assert pull["environment"]["OLLAMA_HOST"] == "http://ollama:11434"

    bot = services["bot"]
    build = bot["build"] if isinstance(bot["build"], str) else bot["build"]["context"]
    assert (REPO / build / "Dockerfile").is_file()
    assert bot["depends_on"]["ollama-pull"]["condition"] == "service_completed_successfully"
    assert "./scenes:/app/scenes" in bot["volumes"]
    assert bot["env_file"] == ".env" and (REPO / ".env.example").is_file()


def test_the_bot_command_is_a_real_subcommand(compose: dict) -> None:
    from circus.cli import build_parser

    command = compose["services"]["bot"]["command"]
    assert command[:2] == ["circus", "bot"]
    parser = build_parser()
    assert parser.parse_args(command[1:]).command == "bot"
    import bot

    assert callable(bot.main)
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert '"circus", "bot"' in dockerfile


def test_templates_ship_inside_the_package_where_no_mount_or_run_can_touch_them(
    compose: dict,
) -> None:
    """./scenes is mounted over /app/scenes; the templates are package data
    (engine/scene_templates, installed by `pip install .`), so the mount cannot hide them."""
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert "FROM python:3.11-slim" in dockerfile
    # the package itself, with the table read's offline voices, never the [embedded] extra
    assert re.search(r"pip install '\.\[voice\]'(\s|$)", dockerfile), "no [embedded] extra"
    assert "CIRCUS_TEMPLATES_DIR" not in dockerfile
    assert "CIRCUS_TEMPLATES_DIR" not in compose["services"]["bot"]["environment"]
    shipped = REPO / "engine" / "scene_templates"
    files = [p.relative_to(REPO / "engine").as_posix() for p in shipped.rglob("*") if p.is_file()]
    assert "scene_templates/interrogation/context.md" in files
    globs = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"][
        "package-data"
    ]["engine"]
    for rel in files:  # every template file is installed with the package
        assert any(fnmatch.fnmatch(rel, g) and rel.count("/") == g.count("/") for g in globs), rel
    ignored = (REPO / ".dockerignore").read_text(encoding="utf-8").split()
    assert ".env" in ignored and ".venv" in ignored and "scenes" in ignored
    assert not (REPO / "scenes" / "templates").exists()


def test_every_variable_is_documented_and_read_by_the_code(compose: dict) -> None:
    documented = env_example()
    code = code_text()
    for service_name, service in compose["services"].items():
        for name in names_used(service):
            if name in READ_BY_LITELLM and service_name == "bot":
                assert name in litellm_text(), f"litellm no longer reads {name}"
                continue
            if name.startswith("OLLAMA_"):
                assert service["image"].startswith("ollama/ollama"), (service_name, name)
                continue
            assert name in documented, f"{name} (used by {service_name}) is not in .env.example"
            if name in COMPOSE_ONLY:
                continue
            assert name in code, f"{name} is not read by engine/, bot/ or circus/"
    for name in documented.keys() - COMPOSE_ONLY:
        assert re.search(rf"\b{name}\b", code), f".env.example sets {name}, which nothing reads"


def litellm_text() -> str:
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.origin is not None
    return (Path(spec.origin).parent / "main.py").read_text(encoding="utf-8")


def test_the_default_model_is_the_local_ollama() -> None:
    env = env_example()
    assert env["CIRCUS_MODEL"].startswith(("ollama_chat/", "ollama/"))
    assert env["CIRCUS_API_BASE"] == ""  # Ollama's own address: localhost, or the service
    bot = yaml.safe_load((REPO / "docker-compose.yml").read_text("utf-8"))["services"]["bot"]
    assert bot["environment"]["OLLAMA_API_BASE"] == "http://ollama:11434"
    assert int(env["CIRCUS_NUM_CTX"]) >= 8192
    assert "DISCORD_TOKEN" in env and env["DISCORD_TOKEN"] == ""  # never a real token


def run_script(script: str, tmp_path: Path, fake: str, **env: str) -> tuple[int, str, list[str]]:
    """Run a compose service's `/bin/sh -c` script with `fake` on PATH as a stand-in command
    that logs its arguments: (exit code, stderr, the stand-in's calls)."""
    script = script.replace("$$", "$")  # compose's escape for a literal $
    log = tmp_path / "calls"
    stand_in = tmp_path / fake
    stand_in.write_text(f'#!/bin/sh\necho "$@" >> {log}\n', encoding="utf-8")
    stand_in.chmod(0o755)
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}", **env}
    result = subprocess.run(["/bin/sh", "-c", script], env=env, capture_output=True, text=True)
    calls = log.read_text().splitlines() if log.exists() else []
    return result.returncode, result.stderr, calls


SERVED = "ollama_chat/qwen2.5:7b"  # what the shipped deploy/litellm/config.yaml serves
MOUNTED = "/proxy/config.yaml"  # where ollama-pull sees the proxy's config


@pytest.mark.parametrize(
    "model, sm_model, proxy_config, pulled",
    [
        ("ollama_chat/qwen2.5:7b", "", None, ["pull qwen2.5:7b"]),
        ("ollama_chat/qwen2.5:7b", "ollama/llama3.2:3b", None, ["pull qwen2.5:7b", "pull llama3.2:3b"]),
        ("anthropic/claude-sonnet-4-5", "", None, []),
        # the gateway section's own setting: the proxy's name, so the proxy's models are pulled
        ("writers-room", "stage-manager", PROXY_CONFIG, ["pull qwen2.5:7b"]),
        ("ollama_chat/qwen2.5:7b", "", PROXY_CONFIG, ["pull qwen2.5:7b"]),  # once
        ("ollama/llama3.2:3b", "", PROXY_CONFIG, ["pull llama3.2:3b", "pull qwen2.5:7b"]),
    ],
)  # fmt: skip
def test_the_pull_script_pulls_the_ollama_models_of_env_and_of_the_proxys_config(
    compose: dict, tmp_path: Path, model: str, sm_model: str, proxy_config, pulled: list[str]
) -> None:
    service = compose["services"]["ollama-pull"]
    assert service["entrypoint"][:2] == ["/bin/sh", "-c"]
    assert f"./deploy/litellm/config.yaml:{MOUNTED}:ro" in service["volumes"]
    assert SERVED in PROXY_CONFIG.read_text("utf-8")
    where = str(proxy_config or tmp_path / "absent.yaml")  # the script reads it where mounted
    script = service["entrypoint"][2].replace(MOUNTED, where)
    code, err, calls = run_script(
        script, tmp_path, "ollama", CIRCUS_MODEL=model, CIRCUS_STAGE_MANAGER_MODEL=sm_model
    )
    assert code == 0, err
    assert calls == pulled


@pytest.mark.parametrize("key", ["", "sk-circus-0123456789abcdef"])
def test_the_proxy_service_will_not_start_without_a_master_key(
    compose: dict, tmp_path: Path, key: str
) -> None:
    entrypoint = compose["services"]["litellm"]["entrypoint"]
    assert entrypoint[:2] == ["/bin/sh", "-c"]
    code, err, calls = run_script(entrypoint[2], tmp_path, "litellm", CIRCUS_GATEWAY_KEY=key)
    if key:
        assert (code, calls) == (0, ["--config /app/config.yaml --port 4000"])
    else:
        assert code == 1 and calls == []
        assert len(err.strip().splitlines()) == 1 and "set CIRCUS_GATEWAY_KEY in .env" in err


def test_the_bot_runs_unprivileged_as_the_users_uid(compose: dict) -> None:
    """Scene files the bot writes into the mounted ./scenes belong to the user, not root."""
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^ARG UID=1000$", dockerfile, re.M) and re.search(
        r"^ARG GID=1000$", dockerfile, re.M
    )
    assert re.search(r'useradd --uid "\$UID" --gid "\$GID"', dockerfile)
    assert 'chown -R "$UID:$GID" /app/scenes' in dockerfile  # writable without a mount too
    users = re.findall(r"^USER (\S+)$", dockerfile, re.M)
    assert users and users[-1] not in ("root", "0"), "the image must not run as root"
    lines = dockerfile.splitlines()
    last_user = max(i for i, line in enumerate(lines) if line.startswith("USER "))
    assert all(not line.startswith("RUN pip") for line in lines[last_user:])  # installs as root
    assert lines[last_user:].count('ENTRYPOINT ["circus-entrypoint"]') == 1

    bot = compose["services"]["bot"]
    assert bot["build"]["args"] == {"UID": "${UID:-1000}", "GID": "${GID:-1000}"}
    assert bot["user"] == "${UID:-1000}:${GID:-1000}"
    env = env_example()
    assert env["UID"] == "1000" and env["GID"] == "1000"


def test_env_example_can_be_exported_for_the_console_as_it_is(compose: dict) -> None:
    """Nothing in .env.example exists only inside a container (a path in the image, the
    compose service's host name): the compose file sets those for the bot itself."""
    for name, value in env_example().items():
        assert "/app/" not in value and not value.startswith("/app"), (name, value)
        assert not re.search(r"//ollama[:/]", value), (name, value)
    env = compose["services"]["bot"]["environment"]
    assert env["CIRCUS_SCENES_DIR"] == "/app/scenes"  # pinned inside the container instead
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert "CIRCUS_SCENES_DIR=/app/scenes" in dockerfile


PROMETHEUS_CONFIG = REPO / "deploy" / "prometheus" / "prometheus.yml"
BOT_COMMAND = ["circus", "bot"]


def profile(compose: dict, name: str) -> dict[str, dict]:
    return {n: s for n, s in compose["services"].items() if name in (s.get("profiles") or [])}


def shard_bots(compose: dict) -> dict[str, dict]:
    """The scale profile's bot processes: every service of it that runs `circus bot`."""
    return {n: s for n, s in profile(compose, "scale").items() if s.get("command") == BOT_COMMAND}


def shard_set(text: str) -> set[int]:
    """The shards a CIRCUS_SHARDS text names, read by the bot's own parser."""
    return set(parse_shard_ids(text))


def test_the_scale_profile_sends_every_model_call_through_the_litellm_proxy(compose: dict) -> None:
    services = compose["services"]
    bots = shard_bots(compose)
    assert len(bots) >= 2 and all(name.startswith("bot-shard-") for name in bots)
    assert set(profile(compose, "scale")) == {"litellm", "prometheus", *bots}
    proxy = services["litellm"]
    assert proxy["image"].startswith("ghcr.io/berriai/litellm")
    assert "./deploy/litellm/config.yaml:/app/config.yaml:ro" in proxy["volumes"]
    assert "exec litellm --config /app/config.yaml --port 4000" in proxy["entrypoint"][2]
    port = "4000"
    config = yaml.safe_load(PROXY_CONFIG.read_text("utf-8"))
    served = {m["model_name"]: m["litellm_params"] for m in config["model_list"]}
    for bot in bots.values():
        assert bot["command"] == services["bot"]["command"]
        assert bot["environment"]["CIRCUS_GATEWAY_URL"] == f"http://litellm:{port}"
        assert "litellm" in bot["depends_on"]
        # the bot asks for the proxy's own model names, and the proxy has Ollama behind it
        for key in ("CIRCUS_MODEL", "CIRCUS_STAGE_MANAGER_MODEL"):
            assert bot["environment"][key] in served
    assert any(p.get("api_base") == "http://ollama:11434" for p in served.values())
    assert config["general_settings"]["master_key"] == "os.environ/CIRCUS_GATEWAY_KEY"
    assert "CIRCUS_GATEWAY_KEY" in env_example()


def test_the_shard_bots_cover_every_shard_exactly_once_with_one_count(compose: dict) -> None:
    bots = shard_bots(compose)
    counts = {bot["environment"]["CIRCUS_SHARD_COUNT"] for bot in bots.values()}
    assert len(counts) == 1, f"every shard bot must be given the same count, not {counts}"
    count = int(counts.pop())
    ranges = [shard_set(bot["environment"]["CIRCUS_SHARDS"]) for bot in bots.values()]
    assert sorted(s for shards in ranges for s in shards) == list(range(count))


def test_the_shard_bots_share_one_scenes_folder_and_each_serves_metrics(compose: dict) -> None:
    """One ./scenes for all (scenes are kept by server inside it); each process's /metrics
    listens on every interface of its container, for Prometheus, and is published nowhere."""
    plain = compose["services"]["bot"]
    for name, bot in shard_bots(compose).items():
        env = bot["environment"]
        assert bot["volumes"] == ["./scenes:/app/scenes"] == plain["volumes"], name
        assert env["CIRCUS_SCENES_DIR"] == "/app/scenes", name
        assert 1 <= int(env["CIRCUS_METRICS_PORT"]) <= 65535, name
        assert env["CIRCUS_METRICS_ADDR"] == "0.0.0.0", name
        assert "ports" not in bot, name
        assert bot["restart"] == "unless-stopped" and bot["user"] == plain["user"], name


def test_prometheus_scrapes_exactly_the_shard_bots_at_their_metrics_port(compose: dict) -> None:
    prometheus = compose["services"]["prometheus"]
    assert prometheus["image"].startswith("prom/prometheus")
    mount = f"./{PROMETHEUS_CONFIG.relative_to(REPO).as_posix()}:/etc/prometheus/prometheus.yml:ro"
    assert mount in prometheus["volumes"]
    assert all(p.startswith("127.0.0.1:") for p in prometheus.get("ports", []))  # no password
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text("utf-8"))
    targets = [
        target
        for job in config["scrape_configs"]
        for group in job["static_configs"]
        for target in group["targets"]
    ]
    expected = [
        f"{name}:{bot['environment']['CIRCUS_METRICS_PORT']}"
        for name, bot in shard_bots(compose).items()
    ]
    assert sorted(targets) == sorted(expected)


def test_plain_compose_up_still_starts_exactly_one_bot(compose: dict) -> None:
    """Without a profile, one `circus bot` connects every shard, as before: no shard settings."""
    plain = {n: s for n, s in compose["services"].items() if not s.get("profiles")}
    bots = [name for name, s in plain.items() if s.get("command") == BOT_COMMAND]
    assert bots == ["bot"]
    env = plain["bot"]["environment"]
    assert not {"CIRCUS_SHARDS", "CIRCUS_SHARD_COUNT"} & set(env)
    assert "prometheus" not in plain and "litellm" not in plain


def test_the_proxys_config_is_an_example_of_models_and_limits() -> None:
    config = yaml.safe_load(PROXY_CONFIG.read_text("utf-8"))
    for entry in config["model_list"]:
        params = entry["litellm_params"]
        assert "/" in params["model"] and isinstance(params.get("rpm"), int), entry
        for value in params.values():  # keys come from the proxy's environment, never the file
            assert not (isinstance(value, str) and value.startswith("sk-")), entry


def has_compose() -> bool:
    return bool(shutil.which("docker")) and (
        subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0
    )


@pytest.mark.skipif(not has_compose(), reason="docker compose is not installed here")
@pytest.mark.parametrize("profile", [[], ["--profile", "scale"]])
def test_docker_compose_validates_the_file(tmp_path: Path, profile: list[str]) -> None:
    """`docker compose config` with .env.example as the .env (in a project folder of its own,
    so no real .env is read)."""
    env = tmp_path / ".env"
    env.write_text((REPO / ".env.example").read_text("utf-8"), encoding="utf-8")
    command = ["docker", "compose", "-f", str(REPO / "docker-compose.yml")]
    command += ["--project-directory", str(tmp_path), *profile, "config", "--quiet"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
