"""``assist tokens add|remove|list --tokens FILE``: the users of a shared daemon's tokens file.
A running daemon sees additions and removals without a restart."""

from __future__ import annotations

import shlex
from pathlib import Path

from daemon.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err


def run_tokens(action: str, name: str | None, path: Path) -> int:
    from daemon.tokens import TokensError, add_user, read_users, remove_user

    file = shlex.quote(str(path))
    try:
        if action == "list":
            for user in sorted(read_users(path)):
                print(user)
            return EXIT_OK
        if not name:
            err(f"name the user: `assist tokens {action} NAME --tokens {file}`")
            return EXIT_USAGE
        if action == "add":
            token = add_user(path, name)
            print(f"token for {name} (shown once; give it to {name} as ASSIST_TOKEN):")
            print(token)
            return EXIT_OK
        if not remove_user(path, name):
            err(f"{path} has no user {name!r}; `assist tokens list --tokens {file}` lists them")
            return EXIT_FAILED
        print(f"removed {name}; the daemon refuses their token from now on")
        return EXIT_OK
    except TokensError as exc:
        err(str(exc))
        return EXIT_USAGE
