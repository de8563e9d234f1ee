"""What the budget tests share: a scene's records as read back from disk, a writer's edit to
context.md, a usage row at a given time. The fixtures (`priced`, `no_operator_budgets`) are in
conftest.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fakeproviders import chat_completion

from engine import Rehearsal
from engine.folder.turns import parse_transcript

REPO = Path(__file__).resolve().parent.parent


def transcript(scene: Path):
    path = scene / "transcript.md"
    return parse_transcript(path.read_text(encoding="utf-8")) if path.exists() else []


def usage(scene: Path) -> list[dict]:
    path = scene / ".circus" / "usage.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def set_context(scene: Path, **settings) -> None:
    """Add `key: value` lines to context.md's front matter, as a writer would."""
    path = scene / "context.md"
    text = path.read_text(encoding="utf-8")
    lines = "".join(f"{k}: {v}\n" for k, v in settings.items())
    path.write_text(text.replace("---\n", "---\n" + lines, 1), encoding="utf-8")


def collect(rehearsal: Rehearsal) -> list:
    events: list = []
    rehearsal.events.listen(events.append)
    return events


def cheap_input_costly_output(priced, name: str = "scripted/priced") -> str:
    # Replies are capped at 2048 tokens: each call must be able to afford a whole reply.
    return priced(name, 0.0, 10.0)  # $10 per million output tokens: a full reply ≈ $0.02


def at(text: str, cost: float = 1.0, tokens: int = 10) -> dict:
    """A usage row written at `text` (an ISO time)."""
    return {"at": text, "cost_usd": cost, "prompt_tokens": tokens, "completion_tokens": 0}


def calls(scene: Path) -> list[dict]:
    """The scene's record of every model call (.circus/calls.jsonl)."""
    path = scene / ".circus" / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def ledger_rows(scenes: Path, account: str) -> list[dict]:
    """Every row of an account's daily ledgers, all days."""
    folder = scenes / ".circus" / "spend" / account
    rows: list[dict] = []
    for path in sorted(folder.glob("*.jsonl")) if folder.exists() else []:
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows


def use_model(scene: Path, model: str, api_base: str) -> None:
    """Every role of the scene (actors and stage manager) on `model` at `api_base`."""
    path = scene / "context.md"
    text = path.read_text(encoding="utf-8").replace("scripted/improv", model)
    path.write_text(text.replace("---\n", f"---\napi_base: {api_base}\n", 1), encoding="utf-8")


ACTOR_LINE = "<thought>想一想</thought><dialogue>「說吧。」</dialogue><cue>ANY</cue>"


def performer(body: dict) -> str:
    """A well-formed reply to each role: actors throw the ball open, so the stage manager is
    asked every turn; it picks whoever has been silent longest."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    if "NEXT:" in body["messages"][0]["content"]:  # the stage manager's format
        silent = re.findall(r"- (\S+)（已 (\d+) 輪沒說話）", prompt)
        name = max(silent, key=lambda s: int(s[1]))[0] if silent else "林小姐"
        return f"NEXT: {name}\nREASON: 輪到{name}"
    return ACTOR_LINE


class BillingServer:
    """An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that bills what it answers.

    litellm reaches it through its real OpenAI provider (`openai/<name>` + `api_base`).
    `answer(body)` gives a reply's text; `usage(body, n)` the usage reported for the n-th reply
    (default 1,000 prompt + 500 reply tokens). `billed` holds the usage of every reply actually
    sent, `requests` every request received. A request for which `hold(body)` is true waits
    until the server closes (a call to cut); `held` is set when one arrives. A thread serves it,
    so a test may call it from its own event loop or from a `circus` subprocess alike.
    """

    def __init__(self, answer=performer, usage=None, hold=None) -> None:
        import threading

        self.answer = answer
        self.usage = usage or (lambda body, n: {"prompt_tokens": 1000, "completion_tokens": 500})
        self.hold = hold or (lambda body: False)
        self.requests: list[dict] = []
        self.billed: list[dict] = []
        self.held = threading.Event()
        self._release = threading.Event()
        self._lock = threading.Lock()

    @property
    def billed_tokens(self) -> int:
        return sum(u["prompt_tokens"] + u["completion_tokens"] for u in self.billed)

    def _reply(self, body: dict) -> tuple[int, bytes]:
        with self._lock:
            self.requests.append(body)
            n = len(self.billed)
        if self.hold(body):
            self.held.set()
            self._release.wait()
            return 503, b"{}"
        text = self.answer(body)
        usage = self.usage(body, n)
        with self._lock:
            self.billed.append(usage)
        reply = chat_completion(body["model"], text, usage, n)
        return 200, json.dumps(reply, ensure_ascii=False).encode("utf-8")  # NaN stays NaN

    def __enter__(self) -> str:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                status, data = server._reply(json.loads(self.rfile.read(length)))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client stopped waiting (a cut)
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self._http.shutdown()
        self._http.server_close()


def left(status, scope: str, unit: str) -> float | None:
    """What is left of the `scope` ("scene" or "day") budget in `unit` ("usd" or "tokens") in a
    status, or None when no such budget applies."""
    found = [b.left for b in status.budgets if (b.scope, b.unit) == (scope, unit)]
    return found[0] if found else None
