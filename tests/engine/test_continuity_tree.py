"""Takes as a tree: a replay records its parent take and turn; old scenes without
the record read as a line; the tree in text (`take list --tree`), as a Mermaid graph in the
take report, and `take diff N` against the take N was made from."""

from __future__ import annotations

import pytest
from clikit import circus

from engine import Actor, Rehearsal, parent_take, tree_lines_of
from engine.errors import BadRequest
from engine.takes.tree import LINEAGE, Parent, mermaid_tree, parents, parse_lineage, tree_lines


@pytest.mark.parametrize(
    "rows, takes, expected",
    [
        ("", [1, 2, 3], {1: None, 2: Parent(1, None), 3: Parent(2, None)}),  # an old scene: a line
        ('{"take": 3, "parent": 1, "turn": 2}\n', [1, 2, 3],
         {1: None, 2: Parent(1, None), 3: Parent(1, 2)}),
        # a later row for the same take wins (a replay redone before anything was played)
        ('{"take": 2, "parent": 1, "turn": 4}\n{"take": 2, "parent": 1, "turn": 1}\n', [1, 2],
         {1: None, 2: Parent(1, 1)}),
        # a row naming a take that is gone, a torn line, a hand-edited one: read as a line
        ('{"take": 3, "parent": 9, "turn": 2}\n{"take": 2, "par\n{"take": "x"}\n', [1, 2, 3],
         {1: None, 2: Parent(1, None), 3: Parent(2, None)}),
        ('{"take": 2, "parent": 2, "turn": 1}\n', [1, 2], {1: None, 2: Parent(1, None)}),
    ],
)  # fmt: skip
def test_each_takes_parent(rows, takes, expected):
    assert parents(parse_lineage(rows), takes) == expected


def test_the_tree_in_text_and_as_a_mermaid_graph():
    tree = {1: None, 2: Parent(1, 2), 3: Parent(1, 3), 4: Parent(2, 1), 5: Parent(4, None)}
    turns = {1: 4, 2: 4, 3: 5, 4: 2, 5: 3}
    assert tree_lines(tree, turns, "en", current=5) == [
        "take_1  4 turns",
        "├─ take_2  4 turns  (from take_1 at turn 2)",
        "│  └─ take_4  2 turns  (from take_2 at turn 1)",
        "│     └─ take_5  3 turns  (current, not saved yet)",
        "└─ take_3  5 turns  (from take_1 at turn 3)",
    ]
    graph = mermaid_tree(tree, "en", highlight=4).splitlines()
    assert graph[:2] == ["```mermaid", "flowchart TD"] and graph[-1] == "```"
    assert "  take_1 -->|turn 2| take_2" in graph and "  take_4 --> take_5" in graph
    assert "  style take_4 stroke-width:3px" in graph


async def test_replays_across_a_restart_make_a_tree(scene, scripted):
    r = Rehearsal(scene, models=scripted)
    await r.run(4, start=Actor("林小姐"))
    await r.takes.save()  # take 1
    await r.takes.replay(1, until=2)
    await r.run(2)
    await r.takes.save()  # take 2, from take 1 at turn 2
    r = Rehearsal(scene, models=scripted)  # a restart: the record is on disk
    await r.takes.replay(1, until=3)
    await r.run(1)
    await r.takes.save()  # take 3, from take 1 at turn 3
    await r.takes.replay(2, until=1)
    await r.run(1)  # the working take 4, not saved
    assert await tree_lines_of(scene) == [
        "take_1  4 輪",
        "├─ take_2  4 輪  （從 take_1 第 2 輪分出）",
        "│  └─ take_4  2 輪  （從 take_2 第 1 輪分出）  （目前這次，尚未存檔）",
        "└─ take_3  4 輪  （從 take_1 第 3 輪分出）",
    ]
    await r.takes.save()
    report = (scene / "takes/take_4/report.md").read_text("utf-8")
    assert "## 排演樹" in report
    assert "take_2 -->|第 1 輪| take_4" in report and "style take_4" in report
    assert await parent_take(scene, 4) == 2 and await parent_take(scene, 3) == 1


async def test_an_old_scene_without_the_record_reads_as_a_line(scene, scripted):
    r = Rehearsal(scene, models=scripted)
    await r.run(2, start=Actor("林小姐"))
    await r.takes.save()
    await r.takes.replay(1, until=1)
    await r.run(1)
    await r.takes.save()
    (scene / LINEAGE).unlink()
    assert await tree_lines_of(scene) == ["take_1  2 輪", "└─ take_2  2 輪"]
    assert await parent_take(scene, 2) == 1
    with pytest.raises(BadRequest):
        await parent_take(scene, 1)


async def test_take_diff_with_one_take_compares_it_with_its_parent(scene, scripted):
    r = Rehearsal(scene, models=scripted)
    await r.run(3, start=Actor("林小姐"))
    await r.takes.save()
    await r.takes.replay(1, until=1)
    await r.run(2)
    await r.takes.save()  # take 2 from take 1 at turn 1
    await r.takes.replay(1, until=2)
    await r.run(1)
    await r.takes.save()  # take 3 from take 1 at turn 2
    one = circus("take", str(scene), "diff", "3", cwd=scene.parent)
    two = circus("take", str(scene), "diff", "1", "3", cwd=scene.parent)
    assert one.returncode == 0, one.stderr
    assert one.stdout == two.stdout and "排演 1 ⇄ 排演 3" in one.stdout
    tree = circus("take", str(scene), "list", "--tree", cwd=scene.parent)
    assert tree.stdout.splitlines() == [
        "take_1  3 輪",
        "├─ take_2  3 輪  （從 take_1 第 1 輪分出）",
        "└─ take_3  3 輪  （從 take_1 第 2 輪分出）",
    ]
    first = circus("take", str(scene), "diff", "1", cwd=scene.parent)
    assert first.returncode == 2 and len(first.stderr.strip().splitlines()) == 1
    assert "第一次排演" in first.stderr or "first take" in first.stderr


def test_a_thousand_takes_never_replayed_draw_as_one_line_without_recursing() -> None:
    takes = list(range(1, 1201))
    lines = tree_lines(parents({}, takes), {}, "en")
    assert len(lines) == 1200
    assert lines[0].startswith("take_1") and lines[-1].lstrip(" └─").startswith("take_1200")


async def test_saving_the_same_turns_twice_is_refused_and_no_take_is_added(scene, scripted):
    r = Rehearsal(scene, models=scripted)
    await r.run(2, start=Actor("林小姐"))
    assert await r.takes.save() == 1
    with pytest.raises(BadRequest) as refused:
        await r.takes.save()  # nothing played since: it would be take 2, the same turns
    assert "as take 1: nothing new to save" in str(refused.value)
    assert [t.number for t in await r.takes.saved()] == [1]
    await r.run(1)
    assert await r.takes.save() == 2  # a turn more is a take of its own
    await r.line_notes.add(2, "too on the nose", "Ana")  # a note on a line of the saved take
    assert await r.takes.save() == 2  # no take 3: the note joins take 2, which has the line
    assert "too on the nose" in (scene / "takes/take_2/line-notes.md").read_text("utf-8")
    with pytest.raises(BadRequest):
        await r.takes.save()
