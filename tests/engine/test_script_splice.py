"""What a splice writes for each rehearsed line: forcing prefixes only where Fountain needs
one, checked by reading the paragraph back with screenplain as well as our own reader."""

from __future__ import annotations

import pytest
from scriptkit import screenplain_speeches

from engine.harvest.export import ExportLine
from engine.harvest.splice import action_paragraph, fountain_cue, fountain_paragraphs


@pytest.mark.parametrize(
    ("name", "cue"),
    [("MARA", "MARA"), ("DR. KIM", "DR. KIM"), ("McCLANE", "@McCLANE"), ("老闆", "@老闆"),
     ("Ruth", "@Ruth"), ("R2D2", "R2D2"), ("42", "@42")],
)  # fmt: skip
def test_a_cue_is_forced_only_when_fountain_would_not_read_it(name: str, cue: str) -> None:
    assert fountain_cue(name) == cue
    text = f"INT. ROOM - DAY\n\n{cue}\nHello.\n"
    assert screenplain_speeches(text) == [(name, (), "Hello.")]


@pytest.mark.parametrize(
    ("action", "forced"),
    [
        ("Rain on the glass.", False),
        ("Mara looks at the clock.\nIt has stopped.", False),
        ("INT. KITCHEN - DAY", True),  # a heading
        ("EXT. somewhere", True),
        ("CUT TO:", True),  # a transition
        ("BANG\nthe door slams", True),  # a cue and its line
        ("# not a section", True),
        (".a forced heading", True),
        ("> centred <", True),
        ("===", True),  # a page break
        ("!exclaimed", True),
    ],
)
def test_action_is_forced_only_when_it_would_read_as_something_else(action, forced) -> None:
    paragraph = action_paragraph(action)
    assert paragraph[0].startswith("!") == forced
    assert [line.removeprefix("!") for line in paragraph] == action.split("\n")


def test_speech_keeps_what_the_actor_said() -> None:
    lines = [ExportLine(1, "老闆", "looks up", "(not a parenthetical)\n*stars* and [[brackets]]")]
    text = "INT. ROOM - DAY\n\n" + "\n\n".join("\n".join(p) for p in fountain_paragraphs(lines))
    [(name, _, said)] = screenplain_speeches(text + "\n")
    assert name == "老闆"
    assert (
        said.replace("\u2060", "") == "(looks up)\n(not a parenthetical)\n*stars* and [[brackets]]"
    )


@pytest.mark.parametrize(
    ("text", "last", "expected"),
    [
        ("A\n\nB\n", 0, "A\n\nX\nY\n\nB\n"),  # after A, before the blank line and B
        ("A\n\nB", 2, "A\n\nB\n\nX\nY"),  # the last line, no line break after it
        ("A\nB\n", 0, "A\n\nX\nY\n\nB\n"),  # B right under A keeps a blank line above it
        ("A\r\n\r\nB\r\n", 0, "A\r\n\r\nX\r\nY\r\n\r\nB\r\n"),  # the file's own line ending
        ("A\n", 0, "A\n\nX\nY\n"),
    ],
)
def test_splice_lines_keeps_every_other_byte(text: str, last: int, expected: str) -> None:
    from engine.script.splicing import splice_lines

    assert splice_lines(text, last, [["X", "Y"]]) == expected
    assert splice_lines(text, last, []) == text
