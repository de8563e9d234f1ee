"""Import benchmark: a screenplay of N pages, made here, imported and spliced back.

For each size it writes one Fountain and one Final Draft file of N pages (about 55 lines a
page: a scene every two pages, four characters, action and dialogue, notes and a dual
dialogue now and then), then times, best of three:

- import: `import_script` of the last scene (the whole file read, every earlier scene walked
  for each character's "previously" section, the folder written);
- splice: `harvest.splice` of that scene with ten rehearsed turns back into the file.

Prints a markdown table; the target is at most a second each at 120 pages on a 2-core
machine, and time linear in pages.

    python bench/bench_import.py [--pages 30,60,120]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import ImportAsk, Rehearsal, import_script  # noqa: E402
from engine.folder.turns import Turn, render_turn  # noqa: E402

CAST = ("MARA", "TOM", "RAY", "LENA")
LINES_PER_PAGE = 55
PAGES_PER_SCENE = 2


def scene_lines(n: int) -> list[list[tuple[str, str]]]:
    """Each scene's paragraphs as (kind, text): heading, action, speeches."""
    scenes = []
    for s in range(n):
        paras: list[tuple[str, str]] = [("heading", f"INT. ROOM {s + 1} - NIGHT")]
        paras.append(("action", f"{CAST[s % 4]} waits by the window. Rain on the glass."))
        lines = 2
        i = 0
        while lines < LINES_PER_PAGE * PAGES_PER_SCENE:
            who = CAST[(s + i) % 4]
            if i % 9 == 4:
                paras.append(("action", f"{who} crosses to the door and back. A long beat."))
            elif i % 17 == 8:
                paras.append(("note", f"{who} is lying here ({s}, {i})."))
            else:
                paras.append(("speech", f"{who}\n(quietly)\nLine {i} of scene {s}, said slowly."))
            lines += 4
            i += 1
        scenes.append(paras)
    return scenes


def fountain(scenes: list[list[tuple[str, str]]]) -> str:
    out = ["Title: Bench", ""]
    for paras in scenes:
        for kind, text in paras:
            out += ["[[" + text + "]]" if kind == "note" else text, ""]
    return "\n".join(out)


def fdx(scenes: list[list[tuple[str, str]]]) -> str:
    def para(kind: str, text: str) -> str:
        return f'    <Paragraph Type="{kind}">\n      <Text>{text}</Text>\n    </Paragraph>'

    out = ['<?xml version="1.0" encoding="UTF-8" standalone="no" ?>',
           '<FinalDraft DocumentType="Script" Template="No" Version="5">', "  <Content>"]  # fmt: skip
    for paras in scenes:
        for kind, text in paras:
            if kind == "heading":
                out.append(para("Scene Heading", text))
            elif kind == "action":
                out.append(para("Action", text))
            elif kind == "note":
                out.append(f'    <Paragraph Type="Action"><ScriptNote ID="1"><Paragraph><Text>{text}'
                           "</Text></Paragraph></ScriptNote><Text>A pause.</Text></Paragraph>")  # fmt: skip
            else:
                who, paren, said = text.split("\n")
                out += [
                    para("Character", who),
                    para("Parenthetical", paren),
                    para("Dialogue", said),
                ]
    out += ["  </Content>", "</FinalDraft>", ""]
    return "\n".join(out)


def best(times: list[float]) -> str:
    return f"{min(times):.3f}"


async def one(path: Path, work: Path, scenes: int) -> tuple[list[float], list[float]]:
    imports, splices = [], []
    for attempt in range(3):
        root = work / f"{path.suffix[1:]}-{attempt}"
        start = time.perf_counter()
        done = await import_script(path, root, ImportAsk(scene=str(scenes)))
        imports.append(time.perf_counter() - start)
        with open(root / "transcript.md", "a", encoding="utf-8") as f:  # ten rehearsed turns
            for n in range(done.turns + 1, done.turns + 11):
                f.write(render_turn(Turn(n, CAST[n % 4], "", f"Rehearsed line {n}."), "en"))
        start = time.perf_counter()
        await Rehearsal(root).harvest.splice(into=path, out=work / f"out{path.suffix}")
        splices.append(time.perf_counter() - start)
    return imports, splices


async def main(pages: list[int]) -> None:
    print("| pages | Fountain KB | import | splice | FDX KB | import | splice |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in pages:
        work = Path(tempfile.mkdtemp(prefix="bench-import-"))
        try:
            made = scene_lines(n // PAGES_PER_SCENE)
            f, x = work / "bench.fountain", work / "bench.fdx"
            f.write_text(fountain(made), encoding="utf-8")
            x.write_text(fdx(made), encoding="utf-8")
            fi, fs = await one(f, work, len(made))
            xi, xs = await one(x, work, len(made))
            kb = (f.stat().st_size // 1024, x.stat().st_size // 1024)
            print(
                f"| {n} | {kb[0]} | {best(fi)} s | {best(fs)} s | {kb[1]} | {best(xi)} s | {best(xs)} s |"
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", default="30,60,120")
    args = parser.parse_args()
    asyncio.run(main([int(p) for p in args.pages.split(",")]))
