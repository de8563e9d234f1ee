"""A loopback fake of Ollama's /api/chat (non-streaming) and /api/show, answering in tags or, when
the request carries a JSON `format` (a schema, or "json"), as the JSON object. `requests` keeps
each chat body.

It serves from its own thread (http.server), not the test's event loop: litellm asks Ollama's
/api/show with a blocking call from inside the event loop, which would wait forever for a
server on that same loop.

    async with FakeOllama(cast) as base:  # litellm: model="ollama_chat/...", api_base=base
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .improv import Improv, count


class FakeOllama:
    def __init__(self, cast: Sequence[str]) -> None:
        self.improv = Improv(cast)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            messages = body.get("messages") or []
            system = next(
                (str(m.get("content")) for m in messages if m.get("role") == "system"), ""
            )
            text = self.improv.answer(system, bool(body.get("format")))
        return {
            "model": body.get("model"),
            "created_at": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": text},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": sum(count(str(m.get("content", ""))) for m in messages),
            "eval_count": count(text),
        }

    async def __aenter__(self) -> str:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.endswith("/api/chat"):
                    answer: dict[str, Any] = fake.chat(body)
                else:  # /api/show: what litellm reads a local model's context size from
                    answer = {"model_info": {"qwen2.context_length": 32768}, "details": {}}
                data = json.dumps(answer, ensure_ascii=False).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    async def __aexit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
