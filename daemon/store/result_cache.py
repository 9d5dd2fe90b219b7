"""The result cache: completions keyed by an xxh3-128 hash of the canonical request.
A small in-memory LRU in front of a SQLite file that every daemon and user can share.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils
import xxhash

log = logging.getLogger(__name__)

TABLE = "code_cache"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 5000
# Check the size bound every this many writes (a count over the table is not free).
_BOUND_CHECK_EVERY = 32


def cache_key(
    fingerprint: str,
    format_name: str,
    format_version: int,
    sampling: dict[str, Any],
    prompt_tokens: list[int],
) -> str:
    """xxh3-128 of the canonical request: model, prompt format, sampling and the final prompt."""
    digest = xxhash.xxh3_128()
    head = {
        "model": fingerprint,
        "format": format_name,
        "format_version": format_version,
        "sampling": sampling,
    }
    digest.update(json.dumps(head, sort_keys=True, separators=(",", ":")).encode())
    digest.update(b"\x00")
    digest.update(array("i", prompt_tokens).tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class CachedResult:
    text: str
    finish_reason: str
    tokens: int
    language: str | None = None
    model: str | None = None
    # A completion's: the model's confidence in ``text`` (0-1), and the other candidates shown
    # beside it, best first.
    confidence: float | None = None
    alternatives: tuple[str, ...] = ()
    faults: tuple[str, ...] = ()  # the workspace checks ``text`` failed (the gate's)

    def extra(self) -> str | None:
        """The fields kept in the ``extra`` column, as JSON; None when there are none."""
        if self.confidence is None and not self.alternatives and not self.faults:
            return None
        fields: dict[str, Any] = {
            "confidence": self.confidence,
            "alternatives": list(self.alternatives),
        }
        if self.faults:
            fields["faults"] = list(self.faults)
        return json.dumps(fields)


def _size(result: CachedResult) -> int:
    """The bytes a result holds, for the cache's size bound."""
    return len((result.text + (result.extra() or "")).encode("utf-8", "surrogatepass"))


def _extra_fields(extra: str | None) -> dict[str, Any]:
    """The ``extra`` column read back; nothing when it is empty or not what was written."""
    if not extra:
        return {}
    try:
        data = json.loads(extra)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    found: dict[str, Any] = {}
    confidence = data.get("confidence")
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        found["confidence"] = float(confidence)
    alternatives = data.get("alternatives")
    if isinstance(alternatives, list) and all(isinstance(a, str) for a in alternatives):
        found["alternatives"] = tuple(alternatives)
    faults = data.get("faults")
    if isinstance(faults, list) and all(isinstance(f, str) for f in faults):
        found["faults"] = tuple(faults)
    return found


class ResultCache:
    """Thread-safe two-level cache. SQLite calls are short; callers may run them off-loop.

    A small in-memory LRU in front of a SQLite file (WAL, busy timeout) that every daemon
    process and every user of a workstation can share. The SQLite level is bounded by entry
    count and bytes, evicting the least recently used rows."""

    def __init__(
        self,
        path: Path,
        max_entries: int = 100_000,
        max_bytes: int = 256 * 1024 * 1024,
        memory_entries: int = 2048,
    ) -> None:
        self.path = path
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.memory_entries = memory_entries
        self._memory: OrderedDict[str, CachedResult] = OrderedDict()
        # The memory level has its own lock, so a lookup never waits behind a busy SQLite file.
        self._mem_lock = threading.Lock()
        self._db_lock = threading.Lock()
        self._writes = 0
        self.problem: str | None = None
        self.hits = 0
        self.misses = 0
        self.db = self._open()

    # -- opening ---------------------------------------------------------------------------
    def _open(self) -> sqlite_utils.Database:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            if self.path.exists() and not os.access(self.path.parent, os.W_OK):
                return self._connect_read_only(exc)
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            log.warning(
                "result cache %s is unreadable (%s); moved aside to %s", self.path, exc, aside
            )
            self.path.rename(aside)
            for suffix in ("-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            return self._connect()

    def _connect_read_only(self, exc: sqlite3.DatabaseError) -> sqlite_utils.Database:
        """A cache in a folder that cannot be written (a read-only mount): served as it is,
        nothing stored. SQLite cannot open a WAL file there the usual way once its ``-shm``
        is gone (a clean close removes it), so it is opened as immutable."""
        conn = sqlite3.connect(
            f"{self.path.resolve().as_uri()}?mode=ro&immutable=1",
            uri=True,
            check_same_thread=False,
            isolation_level=None,
        )
        db = sqlite_utils.Database(conn)
        if not db.table(TABLE).exists():
            conn.close()
            raise exc
        self.problem = f"the folder {self.path.parent} cannot be written"
        log.warning("result cache %s is read only (%s); serving without storing", self.path, exc)
        return db

    def _connect(self) -> sqlite_utils.Database:
        if not self.path.exists():
            # Owner-only from the first byte: cached code is the users' code.
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db = sqlite_utils.Database(conn)
        db.enable_wal()
        conn.execute("PRAGMA synchronous = NORMAL")
        table = db.table(TABLE)
        if not table.exists():
            conn.execute("BEGIN IMMEDIATE")
            try:
                table.create(
                    {
                        "prompt_hash": str,
                        "completion": str,
                        "finish_reason": str,
                        "tokens": int,
                        "language": str,
                        "model": str,
                        "size": int,
                        "created": float,
                        "last_hit": float,
                        "last_used": float,
                        "hit_count": int,
                        "rejects": int,
                        "extra": str,
                    },
                    pk="prompt_hash",
                    not_null={"completion", "created", "last_used", "hit_count", "size"},
                    defaults={"hit_count": 0, "rejects": 0},
                    if_not_exists=True,
                )
                table.create_index(["last_used"], if_not_exists=True)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        if "rejects" not in table.columns_dict:
            conn.execute(f"ALTER TABLE {TABLE} ADD COLUMN rejects INTEGER NOT NULL DEFAULT 0")
        if "extra" not in table.columns_dict:
            conn.execute(f"ALTER TABLE {TABLE} ADD COLUMN extra TEXT")
        feedback = db.table("feedback")
        if feedback.exists() and "user" not in feedback.columns_dict:
            conn.execute("DROP TABLE feedback")  # an early layout without users
        conn.execute(
            "CREATE TABLE IF NOT EXISTS feedback (request_id TEXT NOT NULL, user TEXT NOT NULL, "
            "accepted INTEGER NOT NULL, language TEXT, created REAL NOT NULL)"
        )
        conn.execute("CREATE INDEX IF NOT EXISTS feedback_user ON feedback (user, created)")
        # Reading a row proves the file is a database and the table is sane.
        conn.execute(f"SELECT count(*) FROM {TABLE} WHERE rowid = 1").fetchone()
        return db

    # -- reads and writes ------------------------------------------------------------------
    def get_memory(self, key: str) -> CachedResult | None:
        with self._mem_lock:
            found = self._memory.get(key)
            if found is not None:
                self._memory.move_to_end(key)
            return found

    def get(self, key: str) -> CachedResult | None:
        """Look the key up in memory, then in SQLite; record the hit."""
        found = self.get_memory(key)
        if found is None:
            found = self._get_sqlite(key)
            if found is not None:
                self._remember(key, found)
        with self._mem_lock:
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
        if found is not None:
            self._touch(key)
        return found

    def record_memory_hit(self, key: str) -> None:
        """Count a hit served from memory (the SQLite row's LRU time moves too)."""
        with self._mem_lock:
            self.hits += 1
        self._touch(key)

    def _get_sqlite(self, key: str) -> CachedResult | None:
        try:
            with self._db_lock:
                row = self.db.conn.execute(
                    "SELECT completion, finish_reason, tokens, language, model, extra "
                    f"FROM {TABLE} "
                    "WHERE prompt_hash = ?",
                    (key,),
                ).fetchone()
        except sqlite3.Error as exc:
            log.warning("result cache read failed: %s", exc)
            return None
        if row is None:
            return None
        return CachedResult(
            text=row[0],
            finish_reason=row[1] or "stop",
            tokens=row[2] or 0,
            language=row[3],
            model=row[4],
            **_extra_fields(row[5]),
        )

    def _touch(self, key: str) -> None:
        now = time.time()
        try:
            with self._db_lock:
                self.db.conn.execute(
                    f"UPDATE {TABLE} SET last_hit = ?, last_used = ?, hit_count = hit_count + 1 "
                    "WHERE prompt_hash = ?",
                    (now, now, key),
                )
        except sqlite3.Error as exc:
            log.warning("result cache hit update failed: %s", exc)

    def put(self, key: str, result: CachedResult) -> None:
        """Store a complete answer (callers never pass cancelled or deadline-cut ones: such a
        generation must never come back later as if it were whole)."""
        if result.finish_reason not in ("stop", "length"):
            raise ValueError(f"refusing to cache an incomplete answer ({result.finish_reason})")
        self._remember(key, result)
        now = time.time()
        try:
            with self._db_lock:
                self.db.conn.execute(
                    f"INSERT INTO {TABLE} (prompt_hash, completion, finish_reason, tokens, "
                    "language, model, size, created, last_hit, last_used, hit_count, extra) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, 0, ?) "
                    "ON CONFLICT(prompt_hash) DO UPDATE SET completion = excluded.completion, "
                    "finish_reason = excluded.finish_reason, tokens = excluded.tokens, "
                    "size = excluded.size, last_used = excluded.last_used, "
                    "extra = excluded.extra",
                    (
                        key,
                        result.text,
                        result.finish_reason,
                        result.tokens,
                        result.language,
                        result.model,
                        _size(result),
                        now,
                        now,
                        result.extra(),
                    ),
                )
                self._writes += 1
                due = self._writes % _BOUND_CHECK_EVERY == 1
            if due:
                self.enforce_bounds()
            self._written()
        except sqlite3.Error as exc:
            self._write_failed(exc)

    def _write_failed(self, exc: sqlite3.Error) -> None:
        """A full disk or a read-only file: go on serving, without storing, and say so."""
        reason = str(exc)
        if self.problem != reason:
            log.warning(
                "result cache %s cannot be written (%s); serving without storing", self.path, reason
            )
        self.problem = reason

    def _written(self) -> None:
        if self.problem is not None:
            log.info("result cache %s is writable again", self.path)
            self.problem = None

    @property
    def status(self) -> str:
        return "ok" if self.problem is None else f"not storing: {self.problem}"

    def _remember(self, key: str, result: CachedResult) -> None:
        if self.memory_entries <= 0:
            return
        with self._mem_lock:
            self._memory[key] = result
            self._memory.move_to_end(key)
            while len(self._memory) > self.memory_entries:
                self._memory.popitem(last=False)

    # -- bounds and maintenance ------------------------------------------------------------
    def enforce_bounds(self) -> int:
        """Evict least recently used rows until both bounds hold (to 90% of them); return count."""
        with self._db_lock:
            conn = self.db.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                count, total = conn.execute(
                    f"SELECT count(*), coalesce(sum(size), 0) FROM {TABLE}"
                ).fetchone()
                evicted = 0
                if count > self.max_entries or total > self.max_bytes:
                    keep_entries = (
                        int(self.max_entries * 0.9) if count > self.max_entries else count
                    )
                    target_bytes = int(self.max_bytes * 0.9)
                    excess = count - keep_entries
                    # Drop by entry count first, then continue by bytes if still too big.
                    rows = conn.execute(
                        f"SELECT prompt_hash, size FROM {TABLE} ORDER BY last_used ASC"
                    )
                    victims: list[str] = []
                    remaining = total
                    for prompt_hash, size in rows:
                        if excess <= 0 and remaining <= target_bytes:
                            break
                        victims.append(prompt_hash)
                        remaining -= size or 0
                        excess -= 1
                    conn.executemany(
                        f"DELETE FROM {TABLE} WHERE prompt_hash = ?", [(v,) for v in victims]
                    )
                    evicted = len(victims)
                    with self._mem_lock:
                        for victim in victims:
                            self._memory.pop(victim, None)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        if evicted:
            log.info("result cache evicted %d least recently used entries", evicted)
        return evicted

    def record_feedback(
        self, request_id: str, user: str, accepted: bool, language: str | None
    ) -> None:
        try:
            with self._db_lock:
                self.db.conn.execute(
                    "INSERT INTO feedback (request_id, user, accepted, language, created) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (request_id, user, int(accepted), language, time.time()),
                )
            self._written()
        except sqlite3.Error as exc:
            self._write_failed(exc)

    def user_feedback(self, user: str, limit: int) -> list[bool]:
        """A user's last ``limit`` feedback events, oldest first."""
        try:
            with self._db_lock:
                rows = self.db.conn.execute(
                    "SELECT accepted FROM feedback WHERE user = ? ORDER BY created DESC LIMIT ?",
                    (user, limit),
                ).fetchall()
        except sqlite3.Error:
            return []
        return [bool(row[0]) for row in reversed(rows)]

    def demote(self, key: str, evict_after: int) -> str:
        """A rejected answer: first to go when space is needed, gone after ``evict_after``."""
        with self._mem_lock:
            self._memory.pop(key, None)
        try:
            with self._db_lock:
                conn = self.db.conn
                conn.execute(
                    f"UPDATE {TABLE} SET rejects = rejects + 1, last_used = 0 "
                    "WHERE prompt_hash = ?",
                    (key,),
                )
                row = conn.execute(
                    f"SELECT rejects FROM {TABLE} WHERE prompt_hash = ?", (key,)
                ).fetchone()
                if row is None:
                    return "absent"
                if row[0] >= evict_after:
                    conn.execute(f"DELETE FROM {TABLE} WHERE prompt_hash = ?", (key,))
                    return "evicted"
            return "demoted"
        except sqlite3.Error as exc:
            self._write_failed(exc)
            return "absent"

    def stats(self) -> dict[str, Any]:
        with self._db_lock:
            count, total, hit_sum = self.db.conn.execute(
                f"SELECT count(*), coalesce(sum(size), 0), coalesce(sum(hit_count), 0) FROM {TABLE}"
            ).fetchone()
        with self._mem_lock:
            memory = len(self._memory)
        file_bytes = sum(
            p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists()
        )
        return {
            "path": str(self.path),
            "entries": count,
            "bytes": total,
            "file_bytes": file_bytes,
            "stored_hits": hit_sum,
            "memory_entries": memory,
            "session_hits": self.hits,
            "session_misses": self.misses,
        }

    def clear(self) -> int:
        with self._db_lock:
            cur = self.db.conn.execute(f"DELETE FROM {TABLE}")
            removed = cur.rowcount
        with self._mem_lock:
            self._memory.clear()
        try:
            with self._db_lock:
                self.db.conn.execute("VACUUM")
        except sqlite3.Error:
            pass
        return removed

    def close(self) -> None:
        with self._db_lock:
            self.db.conn.close()
