"""Run a batch of `circus` command lines in one process, in order, and write what each returned.

tests/house/test_docs.py runs every command a page of the docs shows. One subprocess per command
would import litellm once per command (seconds each); this runs a page's commands one after
the other through `circus.cli.main(argv)` — the same entry point `python -m circus` calls — in
one interpreter, with the working directory, environment and stdin each command line gives.

    python tests/dockit.py BATCH.json RESULTS.json

BATCH.json is a list of {"argv": [...], "cwd": "...", "env": {...}, "stdin": "..."}; RESULTS.json gets one
{"code": int, "stdout": str, "stderr": str} per command, in the same order.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback
from pathlib import Path


def run_one(argv: list[str], cwd: str, env: dict[str, str], stdin: str) -> dict[str, object]:
    from circus.cli import main

    os.chdir(cwd)
    saved_env = dict(os.environ)
    saved_stdin = sys.stdin
    out, err = io.StringIO(), io.StringIO()
    os.environ.update(env)
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: --help, a usage error
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            except Exception:  # a traceback is a failure of this command only, shown with it
                traceback.print_exc()
                code = -1
    finally:
        sys.stdin = saved_stdin
        os.environ.clear()
        os.environ.update(saved_env)
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def main() -> None:
    batch_file, results_file = (Path(a).resolve() for a in sys.argv[1:3])  # before any chdir
    batch = json.loads(batch_file.read_text("utf-8"))
    results = [run_one(c["argv"], c["cwd"], c.get("env", {}), c.get("stdin", "")) for c in batch]
    results_file.write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    sys.stdout.flush()
    os._exit(0)  # as `circus` does: nothing left needs the interpreter's slow last collection


if __name__ == "__main__":
    main()
