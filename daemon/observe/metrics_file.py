"""The metrics file: its tables, the upgrade of a file an older assist wrote, and its queries.
The recorder and ``assist stats`` both open it with ``connect``, which upgrades it in place."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    task TEXT NOT NULL,
    language TEXT,
    path TEXT,
    user TEXT NOT NULL,
    outcome TEXT NOT NULL,
    route TEXT,
    finish_reason TEXT,
    cached INTEGER NOT NULL,
    cache_match TEXT,
    total_ms REAL,
    first_token_ms REAL,
    prompt_ms REAL,
    queue_ms REAL,
    tokens INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    stages TEXT,
    verified INTEGER,
    changed INTEGER,
    error_code TEXT,
    request_id TEXT,
    checked INTEGER
);
CREATE INDEX IF NOT EXISTS requests_at ON requests (at);
CREATE TABLE IF NOT EXISTS feedback_events (
    at REAL NOT NULL, user TEXT NOT NULL, language TEXT, accepted INTEGER NOT NULL,
    request_id TEXT
);
CREATE INDEX IF NOT EXISTS feedback_events_at ON feedback_events (at);
"""
# The columns added since the first version of the file: a file without them gains them (NULL
# in the rows it holds). ``request_id`` links feedback to the answer it concerns; ``checked``
# is False for a completion no checker could judge (its ``verified`` then says nothing).
_ADDED = (
    ("requests", "request_id", "TEXT"),
    ("requests", "checked", "INTEGER"),
    ("feedback_events", "request_id", "TEXT"),
)
REQUEST_COLUMNS = (
    "at",
    "task",
    "language",
    "path",
    "user",
    "outcome",
    "route",
    "finish_reason",
    "cached",
    "cache_match",
    "total_ms",
    "first_token_ms",
    "prompt_ms",
    "queue_ms",
    "tokens",
    "prompt_tokens",
    "stages",
    "verified",
    "changed",
    "error_code",
    "request_id",
    "checked",
)
FEEDBACK_COLUMNS = ("at", "user", "language", "accepted", "request_id")
# The completion a feedback event concerns: the last one answered under its request id.
_ANSWERED = (
    "SELECT r.cached FROM requests r WHERE r.request_id = {id} AND r.task = 'complete' "
    "AND r.outcome = 'done' ORDER BY r.id DESC LIMIT 1"
)


def connect(path: Path) -> sqlite3.Connection:
    """The metrics file at ``path`` (made, readable by its owner only, when missing), with the
    tables this version writes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    conn = sqlite3.connect(path, timeout=5, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.executescript(_SCHEMA)
    upgrade(conn)
    return conn


def _missing(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    present: dict[str, set[str]] = {}
    for table, _, _ in _ADDED:
        if table not in present:
            present[table] = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    return [(table, column, kind) for table, column, kind in _ADDED if column not in present[table]]


def upgrade(conn: sqlite3.Connection) -> None:
    """Add the columns an older file lacks, in one transaction that keeps every row (another
    process opening the file at the same time waits, then finds them added)."""
    if _missing(conn):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for table, column, kind in _missing(conn):
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    conn.execute("CREATE INDEX IF NOT EXISTS requests_request_id ON requests (request_id)")


def insert(
    conn: sqlite3.Connection,
    requests: Sequence[tuple[Any, ...]],
    feedback: Sequence[tuple[Any, ...]],
) -> None:
    """Rows of ``REQUEST_COLUMNS`` and ``FEEDBACK_COLUMNS``, in one transaction."""
    conn.execute("BEGIN")
    try:
        for table, columns, rows in (
            ("requests", REQUEST_COLUMNS, requests),
            ("feedback_events", FEEDBACK_COLUMNS, feedback),
        ):
            conn.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' for _ in columns)})",
                rows,
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def read_requests(conn: sqlite3.Connection, since: float) -> list[dict[str, Any]]:
    """The request records from ``since`` on, oldest first."""
    cursor = conn.execute(
        f"SELECT {', '.join(REQUEST_COLUMNS)} FROM requests WHERE at >= ? ORDER BY at", (since,)
    )
    return [dict(zip(REQUEST_COLUMNS, row, strict=True)) for row in cursor]


def read_feedback(conn: sqlite3.Connection, since: float) -> list[dict[str, Any]]:
    """The feedback events from ``since`` on, each with ``cached``: whether the completion it
    concerns was a cache hit (None when no answered completion has its request id: an answer
    from before request ids were recorded, one pruned, or an id no answer had)."""
    cursor = conn.execute(
        f"SELECT f.at, f.user, f.language, f.accepted, f.request_id, "
        f"({_ANSWERED.format(id='f.request_id')}) FROM feedback_events f WHERE f.at >= ?",
        (since,),
    )
    return [
        {
            "at": at,
            "user": user,
            "language": language,
            "accepted": bool(accepted),
            "request_id": request_id,
            "cached": None if cached is None else bool(cached),
        }
        for at, user, language, accepted, request_id, cached in cursor
    ]


def answer_was_cached(conn: sqlite3.Connection, request_id: str | None) -> bool | None:
    """Whether the completion answered under ``request_id`` was a cache hit; None: no such."""
    if request_id is None:
        return None
    row = conn.execute(_ANSWERED.format(id="?"), (request_id,)).fetchone()
    return None if row is None else bool(row[0])


def fresh_first_tokens(conn: sqlite3.Connection, since: float) -> list[float]:
    """Time to first token (ms) of the completions the model wrote from ``since`` on."""
    cursor = conn.execute(
        "SELECT first_token_ms FROM requests WHERE at >= ? AND task = 'complete' "
        "AND outcome = 'done' AND cached = 0 AND first_token_ms IS NOT NULL",
        (since,),
    )
    return [row[0] for row in cursor]


def prune(conn: sqlite3.Connection, before: float, max_rows: int) -> None:
    """Drop records older than ``before`` and all but the last ``max_rows`` requests."""
    conn.execute("DELETE FROM requests WHERE at < ?", (before,))
    conn.execute("DELETE FROM requests WHERE id <= (SELECT max(id) FROM requests) - ?", (max_rows,))
    conn.execute("DELETE FROM feedback_events WHERE at < ?", (before,))
