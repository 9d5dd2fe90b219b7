"""Who is asking: per-user tokens for a daemon shared by a team, and the file that holds them.
The file holds each token's SHA-256, never the token, and is re-read when it changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import shlex
import threading
import tomllib
from pathlib import Path

LOCAL_USER = "local"
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_.")


class TokensError(ValueError):
    """The tokens file is missing, unreadable or malformed; the message says which."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _check_name(name: str) -> str:
    if not name or not set(name.lower()) <= _NAME_CHARS or len(name) > 64:
        raise TokensError(f"user name {name!r}: use letters, digits, '-', '_' or '.'")
    return name


def add_command(path: Path) -> str:
    """The command that adds a user to the tokens file ``path``, as messages suggest it."""
    return f"`assist tokens add NAME --tokens {shlex.quote(str(path))}`"


def _missing(path: Path) -> TokensError:
    return TokensError(f"the tokens file {path} does not exist; create it with {add_command(path)}")


def read_users(path: Path) -> dict[str, str]:
    """User name -> token hash."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _missing(path) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TokensError(f"cannot read the tokens file {path}: {exc}") from None
    users = data.get("users", {})
    if not isinstance(users, dict):
        raise TokensError(f"{path}: [users] must be a table of users")
    found: dict[str, str] = {}
    for name, entry in users.items():
        digest = entry.get("token_sha256") if isinstance(entry, dict) else None
        if not isinstance(digest, str) or len(digest) != 64:
            raise TokensError(f"{path}: user {name!r} needs token_sha256 (64 hex digits)")
        found[_check_name(name)] = digest.lower()
    return found


def write_users(path: Path, users: dict[str, str]) -> None:
    """Write the tokens file owner-only (0600), atomically."""
    lines = ["# assist tokens: one table per user; the token's SHA-256, never the token.\n"]
    for name in sorted(users):
        lines.append(f'\n[users."{name}"]\ntoken_sha256 = "{users[name]}"\n')
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("".join(lines))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def add_user(path: Path, name: str) -> str:
    """Create (or replace) a user's token; return the token, which is shown only now."""
    users = read_users(path) if path.exists() else {}
    token = "ast_" + secrets.token_urlsafe(32)
    users[_check_name(name)] = hash_token(token)
    write_users(path, users)
    return token


def remove_user(path: Path, name: str) -> bool:
    users = read_users(path)
    if name not in users:
        return False
    del users[name]
    write_users(path, users)
    return True


class TokenStore:
    """The users of a tokens file (TOML, one table per user holding the SHA-256 of the user's
    token), re-read when the file changes, so removing a user takes effect without a restart."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._users: dict[str, str] = {}
        try:
            self._reload()
        except FileNotFoundError:
            raise _missing(path) from None
        if not self._users:
            raise TokensError(
                f"the tokens file {path} has no users; add one with {add_command(path)}"
            )

    def _reload(self) -> None:
        st = self.path.stat()
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            self._users = read_users(self.path)
            self._stamp = stamp

    def user_for(self, token: str | None) -> str | None:
        """The user a token belongs to, or None. Every user's hash is compared, always, in
        constant time."""
        with self._lock:
            # A file being rewritten keeps the last good list rather than lock everyone out.
            with contextlib.suppress(OSError, TokensError):
                self._reload()
            users = dict(self._users)
        presented = hash_token(token or "")
        found = None
        for name, digest in users.items():
            if hmac.compare_digest(presented, digest) and token:
                found = name
        return found

    @property
    def users(self) -> list[str]:
        return sorted(self._users)
