"""Driving `circus` as a writer does, with an offline environment, and what it left on disk
(takes, turns, backstage).

`circus(...)` runs the command in this process — its own environment, working folder, stdin
and captured stdout/stderr, its exit code — as the console script would, without paying for a
new interpreter; `circus_process(...)` and `Live` start a real process, for what only a
process shows (signals, a terminal, two processes at once, the interpreter's own exit).
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from engine.folder.turns import parse_backstage, parse_transcript

REPO = Path(__file__).resolve().parent.parent
THOUGHT = "weighs what was said"  # every scripted/improv thought contains this
WAKE_CAST = {"Ruth", "Danny", "Carol"}
ZH_CAST = {"林小姐", "刑警", "律師"}


def cli_env(**extra: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key in list(env):
        if key.startswith(("CIRCUS_", "DISCORD_")):
            del env[key]
    env.update(
        CIRCUS_MODEL="scripted/improv",
        PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        PYTHONUNBUFFERED="1",
    )
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def circus(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`circus ARGS` run in this process, as the console script runs it: (exit code, stdout,
    stderr). From inside a running event loop it runs in a thread of its own (the CLI starts
    its own loop), and `timeout` bounds how long a broken test can hang."""
    command = ["circus", *args]
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _inside(command, cwd, env or cli_env(), stdin)
    done: list[subprocess.CompletedProcess[str]] = []
    worker = threading.Thread(
        target=lambda: done.append(_inside(command, cwd, env or cli_env(), stdin))
    )
    worker.start()
    worker.join(timeout)
    assert done, f"circus {' '.join(args)} did not finish within {timeout} s"
    return done[0]


_one_at_a_time = threading.Lock()  # the process-wide things a command is given are shared


def _inside(
    command: list[str], cwd: Path, env: dict[str, str], stdin: str | None
) -> subprocess.CompletedProcess[str]:
    from circus import cli
    from engine.config import default_config
    from engine.door import prices

    out, err = io.StringIO(), io.StringIO()
    with _one_at_a_time:
        saved = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr)
        factory, registered = logging.getLogRecordFactory(), prices.snapshot()
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin or ""), out, err
        default_config.cache_clear()
        try:
            code = cli._main(command[1:])
        except SystemExit as exc:  # argparse's --help, --version and usage errors
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        finally:
            os.environ.clear()
            os.environ.update(saved[0])
            os.chdir(saved[1])
            sys.stdin, sys.stdout, sys.stderr = saved[2:]
            logging.setLogRecordFactory(factory)
            prices.restore(registered)
            default_config.cache_clear()
    return subprocess.CompletedProcess(command, code, out.getvalue(), err.getvalue())


def circus_process(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """`python -m circus ARGS` in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "circus", *args],
        cwd=cwd,
        env=env or cli_env(),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def refused(result, *says: str) -> str:
    """Exit 2 with one `circus:` line on stderr that says each of `says`; that line."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("circus: "), result.stderr
    for text in says:
        assert text in lines[0], lines[0]
    return lines[0]


def listing(root: Path) -> list[tuple[str, int, int]]:
    """Every path under root with its size and mtime: equal listings mean nothing was written."""
    out = []
    for path in sorted(root.rglob("*")):
        st = path.stat()
        out.append(
            (str(path.relative_to(root)), st.st_size if path.is_file() else 0, st.st_mtime_ns)
        )
    return out


def turns_of(scene: Path):
    return parse_transcript((scene / "transcript.md").read_text(encoding="utf-8"))


def check_backstage_complete(scene: Path) -> None:
    """Every turn on the public record has its thought in that actor's backstage log."""
    turns = turns_of(scene)
    assert [t.number for t in turns] == list(range(1, len(turns) + 1))
    for turn in turns:
        log = scene / "backstage" / f"{turn.actor}.log"
        thoughts = parse_backstage(log.read_text(encoding="utf-8"))
        assert thoughts.get(turn.number), f"turn {turn.number} has no backstage entry"
    assert not (scene / ".circus" / "pending.json").exists()


class Live:
    """A running `circus` subprocess whose stdout and stderr are read line by line."""

    def __init__(self, *args: str, cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "circus", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self.seen = {"out": "", "err": ""}
        for name, stream in (("out", self.proc.stdout), ("err", self.proc.stderr)):
            threading.Thread(target=self._pump, args=(name, stream), daemon=True).start()

    def _pump(self, name: str, stream) -> None:
        for line in stream:
            self.lines.put((name, line))

    # The timeouts bound a hang only: a `circus` process on busy cores (the suite runs on every
    # core, pyproject addopts) can take half a minute to import litellm before its first line.
    def wait_for(self, text: str, stream: str = "out", timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen[stream]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} never appeared on std{stream}: {self.seen}")
            try:
                name, line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            self.seen[name] += line

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def finish(self, timeout: float = 120) -> int:
        code = self.proc.wait(timeout=timeout)
        time.sleep(0.1)
        while not self.lines.empty():
            name, line = self.lines.get()
            self.seen[name] += line
        return code
