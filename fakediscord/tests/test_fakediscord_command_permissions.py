"""The fake decides who may use an application command as Discord does (permissions v2):
Administrator bypasses all; channel entries first; a command-level user/role entry decides
outright; an app-level deny hides; otherwise default_member_permissions (every bit)."""

from __future__ import annotations

import pytest

from fakediscord.command_permissions import CHANNEL, ROLE, USER, Entry, command_allowed
from fakediscord.models import P

GUILD, USER_ID, ROLE_ID, OTHER_ROLE, CHAN, THREAD_PARENT = 1000, 7, 50, 51, 300, 301
MEMBER = P.EVERYONE_DEFAULT
MOD = P.EVERYONE_DEFAULT | P.MANAGE_THREADS
ADMIN = P.ADMINISTRATOR
NEED = str(P.MANAGE_THREADS)

CASES = [
    # (default_member_permissions, member perms, command-level, app-level, allowed)
    (None, MEMBER, [], [], True),
    (NEED, MEMBER, [], [], False),
    (NEED, MOD, [], [], True),
    ("0", MOD, [], [], False),  # "0": admins only
    ("0", ADMIN, [], [], True),
    (NEED, ADMIN, [Entry(USER_ID, USER, False)], [], True),  # admins cannot be locked out
    (NEED, MEMBER, [Entry(USER_ID, USER, True)], [], True),  # command-level overrides the default
    (NEED, MEMBER, [Entry(ROLE_ID, ROLE, True)], [], True),
    (NEED, MEMBER, [Entry(ROLE_ID, ROLE, True), Entry(OTHER_ROLE, ROLE, False)], [], True),
    (NEED, MOD, [Entry(ROLE_ID, ROLE, False)], [], False),
    (NEED, MOD, [Entry(ROLE_ID, ROLE, False), Entry(USER_ID, USER, True)], [], True),
    (NEED, MEMBER, [Entry(GUILD, ROLE, True)], [], True),  # @everyone at command level
    (None, MEMBER, [], [Entry(GUILD, ROLE, False)], False),  # app-level deny hides
    (NEED, MEMBER, [], [Entry(USER_ID, USER, True)], False),  # app-level allow keeps the default
    (NEED, MEMBER, [Entry(USER_ID, USER, True)], [Entry(GUILD, ROLE, False)], True),
    (None, MEMBER, [Entry(CHAN, CHANNEL, False)], [], False),
    (None, MEMBER, [Entry(THREAD_PARENT, CHANNEL, False)], [], False),  # threads follow parent
    (None, MEMBER, [Entry(GUILD - 1, CHANNEL, False)], [], False),  # all channels
    (None, MEMBER, [Entry(GUILD - 1, CHANNEL, False), Entry(CHAN, CHANNEL, True)], [], True),
    (None, MEMBER, [Entry(CHAN, CHANNEL, True)], [Entry(CHAN, CHANNEL, False)], True),
    (None, MEMBER & ~P.USE_APPLICATION_COMMANDS, [], [], False),
]


@pytest.mark.parametrize("default, perms, command_level, app_level, allowed", CASES)
def test_who_may_use_a_command(default, perms, command_level, app_level, allowed):
    assert (
        command_allowed(
            default_member_permissions=default,
            member_permissions=perms,
            user_id=USER_ID,
            role_ids=[ROLE_ID, OTHER_ROLE],
            channel_ids=(CHAN, THREAD_PARENT),
            guild_id=GUILD,
            command_level=command_level,
            app_level=app_level,
        )
        is allowed
    )
