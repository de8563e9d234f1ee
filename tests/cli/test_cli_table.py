"""The `circus` parser is a table (circus.cli.COMMANDS): a row per command, its help a catalog
key, its handler named as "module.function"; adding a command is adding a row."""

from __future__ import annotations

import inspect

import pytest

from circus.cli import COMMANDS, SCENE, Command, _handler, arg, build_parser
from circus.exits import UsageError
from engine.catalog import EN


@pytest.mark.parametrize("row", COMMANDS, ids=lambda row: row.name)
def test_every_row_names_a_handler_that_exists_and_help_the_catalog_has(row: Command) -> None:
    handler = _handler(row.handler)
    # `bot` runs discord.py's own loop; every other command runs under asyncio.run
    assert inspect.iscoroutinefunction(handler) == (row.name != "bot")
    keys = [row.help] + [a.help for r in (row, *row.actions) for a in r.args if a.help]
    keys += [action.help for action in row.actions]
    assert [k for k in keys if k not in EN] == []


def test_a_new_row_is_a_new_command_with_its_arguments_help_and_handler(
    capsys: pytest.CaptureFixture[str],
) -> None:
    row = Command(
        "rehearse-more",
        "cli.help.status",
        (SCENE, arg("--tree", action="store_true", help="cli.arg.take.full")),
        "commands.cmd_status",
    )
    parser = build_parser((*COMMANDS, row))
    args = parser.parse_args(["rehearse-more", "scenes/s1", "--tree"])
    assert (args.command, args.scene, args.tree) == ("rehearse-more", "scenes/s1", True)
    assert _handler(args.handler) is _handler("commands.cmd_status")
    assert "rehearse-more" in parser.format_help()
    with pytest.raises(SystemExit):
        parser.parse_args(["rehearse-more", "--help"])
    shown = capsys.readouterr().out
    assert EN["cli.help.status"] in shown and EN["cli.arg.take.full"] in shown


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["actor"], "the following arguments are required: add|remove|rename"),
        (["actor", "add", "s1"], "the following arguments are required: NAME"),
        (["run", "s1", "-n", "0"], "the number of turns must be between 1 and"),
        (["frob"], "invalid choice: 'frob'"),
    ],
)
def test_what_the_table_refuses_is_one_usage_line(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as refused:
        build_parser().parse_args(argv)
    assert message in str(refused.value)
    assert str(refused.value).endswith("--help`)")
