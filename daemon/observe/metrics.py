"""One record per request, kept in SQLite, and the Prometheus view of the same records.
A thread of its own writes the records, so a request's hot path only puts one on a queue.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

log = logging.getLogger(__name__)

LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
_BATCH = 500
_FLUSH_S = 0.25
_GATHER_S = 0.2
_QUEUE = 20_000
# Warnings look at this much recent history and repeat at most this often.
_WATCH_S = 300.0
_WARN_EVERY_S = 600.0


@dataclass
class RequestRecord:
    task: str  # "complete" or "fix"
    language: str | None
    path: str | None
    user: str
    outcome: str  # "done", "error", "busy", "refused", "cancelled", "replaced"
    at: float = field(default_factory=time.time)
    route: str | None = None
    finish_reason: str | None = None
    cached: bool = False
    cache_match: str | None = None
    total_ms: float | None = None
    first_token_ms: float | None = None
    prompt_ms: float | None = None
    queue_ms: float | None = None
    tokens: int = 0
    prompt_tokens: int = 0
    stages: dict[str, float] = field(default_factory=dict)
    verified: bool | None = None
    changed: bool | None = None
    error_code: str | None = None


@dataclass
class FeedbackRecord:
    user: str
    language: str | None
    accepted: bool
    at: float = field(default_factory=time.time)


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
    error_code TEXT
);
CREATE INDEX IF NOT EXISTS requests_at ON requests (at);
CREATE TABLE IF NOT EXISTS feedback_events (
    at REAL NOT NULL, user TEXT NOT NULL, language TEXT, accepted INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS feedback_events_at ON feedback_events (at);
"""
_COLUMNS = [
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
]


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    conn = sqlite3.connect(path, timeout=5, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.executescript(_SCHEMA)
    return conn


def _row(record: RequestRecord) -> tuple[Any, ...]:
    return tuple(
        (json.dumps(record.stages) if record.stages else None)
        if column == "stages"
        else getattr(record, column)
        for column in _COLUMNS
    )


class PrometheusView:
    """The collectors /metrics serves, fed by the recorder thread."""

    def __init__(self) -> None:
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "assist_requests", "Requests answered", ["task", "language", "outcome"], registry=r
        )
        self.hits = Counter(
            "assist_cache_hits",
            "Requests answered from the cache",
            ["task", "language", "match"],
            registry=r,
        )
        self.errors = Counter("assist_errors", "Requests that failed", ["task", "code"], registry=r)
        self.feedback = Counter(
            "assist_feedback", "Answers accepted or rejected", ["language", "accepted"], registry=r
        )
        self.fixes = Counter("assist_fixes", "Repairs by result", ["result"], registry=r)
        self.latency = Histogram(
            "assist_request_seconds",
            "Time from a request's arrival to its last event",
            ["task", "language", "route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.first_token = Histogram(
            "assist_first_token_seconds",
            "Time from a request's arrival to its first token",
            ["task", "language"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.queue_depth = Gauge("assist_queue_depth", "Jobs waiting for the model", registry=r)
        self.cache_entries = Gauge("assist_cache_entries", "Results in the cache", registry=r)

    def _child(self, metric: Any, *labels: str) -> Any:
        """A labelled child, looked up once (labels() is the costly part of an update)."""
        key = (id(metric), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def observe(self, record: RequestRecord) -> None:
        language = record.language or "unknown"
        self._child(self.requests, record.task, language, record.outcome).inc()
        if record.cached:
            self._child(self.hits, record.task, language, record.cache_match or "exact").inc()
        if record.outcome == "error":
            self._child(self.errors, record.task, record.error_code or "unknown").inc()
        if record.total_ms is not None and record.outcome == "done":
            route = record.route or "none"
            self._child(self.latency, record.task, language, route).observe(record.total_ms / 1000)
        if record.first_token_ms is not None and record.outcome == "done":
            seconds = record.first_token_ms / 1000
            self._child(self.first_token, record.task, language).observe(seconds)
        if record.task == "fix" and record.outcome == "done":
            if record.changed:
                result = "fixed"
            elif record.verified:
                result = "nothing_to_fix"
            else:
                result = "not_fixed"
            self.fixes.labels(result).inc()

    def observe_feedback(self, record: FeedbackRecord) -> None:
        self.feedback.labels(record.language or "unknown", str(record.accepted).lower()).inc()


class MetricsRecorder:
    """The API hands each finished request's record here; a thread of its own writes records in
    batches and updates the Prometheus collectors, so the request's hot path only puts a small
    object on a queue. Records are bounded by age and count. The same thread watches the recent
    fast-path completions and the cache hit rate and warns in the daemon's log when the P99
    goes over its threshold or the hit rate under its floor."""

    def __init__(
        self,
        path: Path,
        retention_days: float = 30.0,
        max_rows: int = 1_000_000,
        p99_warn_ms: float = 500.0,
        hit_rate_floor: float = 0.0,
        check_s: float = 60.0,
    ) -> None:
        self.path = path
        self.retention_s = retention_days * 86400
        self.max_rows = max_rows
        self.p99_warn_ms = p99_warn_ms
        self.hit_rate_floor = hit_rate_floor
        self.check_s = check_s
        self.prometheus = PrometheusView()
        self.dropped = 0
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=_QUEUE)
        self._recent: deque[tuple[float, float | None, bool]] = deque(maxlen=5000)
        self._warned: dict[str, float] = {}
        self._written = 0
        self._conn = connect(path)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="assist-metrics", daemon=True)
        self._thread.start()

    # -- the hot path: put and return ------------------------------------------------------
    def record(self, record: RequestRecord | FeedbackRecord) -> None:
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until every record put so far is written (for readers that need them all)."""
        done = threading.Event()
        self._queue.put(done)  # the thread sets it once everything before it is written
        done.wait(timeout)

    # -- the recorder thread ---------------------------------------------------------------
    def _work(self) -> None:
        last_check = time.monotonic()
        while not self._stop.is_set():
            batch: list[Any] = []
            try:
                batch.append(self._queue.get(timeout=_FLUSH_S))
                # Let records gather instead of waking for each one: the thread then takes the
                # interpreter's lock a few times a second, not once per request.
                if not isinstance(batch[0], threading.Event) and self._queue.qsize() < _BATCH:
                    self._stop.wait(_GATHER_S)
                while len(batch) < _BATCH:
                    item = self._queue.get_nowait()
                    batch.append(item)
            except queue.Empty:
                pass
            if batch:
                self._write(batch)
            if time.monotonic() - last_check >= self.check_s:
                last_check = time.monotonic()
                self._watch()

    def _write(self, batch: list[Any]) -> None:
        requests = [r for r in batch if isinstance(r, RequestRecord)]
        feedback = [r for r in batch if isinstance(r, FeedbackRecord)]
        try:
            with self._lock:
                conn = self._conn
                conn.execute("BEGIN")
                conn.executemany(
                    f"INSERT INTO requests ({', '.join(_COLUMNS)}) "
                    f"VALUES ({', '.join('?' for _ in _COLUMNS)})",
                    [_row(r) for r in requests],
                )
                conn.executemany(
                    "INSERT INTO feedback_events (at, user, language, accepted) "
                    "VALUES (?, ?, ?, ?)",
                    [(f.at, f.user, f.language, int(f.accepted)) for f in feedback],
                )
                conn.execute("COMMIT")
            self._written += len(requests)
            if self._written >= 1000:
                self._written = 0
                self._prune()
        except sqlite3.Error as exc:
            log.warning("metrics could not be written (%s); %d records lost", exc, len(batch))
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
        for item in batch:
            if isinstance(item, RequestRecord):
                self.prometheus.observe(item)
                if item.task == "complete" and item.outcome == "done":
                    fast = item.route == "fast" and not item.cached
                    self._recent.append((item.at, item.total_ms if fast else None, item.cached))
            elif isinstance(item, FeedbackRecord):
                self.prometheus.observe_feedback(item)
            elif isinstance(item, threading.Event):
                item.set()

    def _prune(self) -> None:
        with self._lock:
            self._conn.execute(
                "DELETE FROM requests WHERE at < ?", (time.time() - self.retention_s,)
            )
            self._conn.execute(
                "DELETE FROM requests WHERE id <= (SELECT max(id) FROM requests) - ?",
                (self.max_rows,),
            )
            self._conn.execute(
                "DELETE FROM feedback_events WHERE at < ?", (time.time() - self.retention_s,)
            )

    def _watch(self) -> None:
        since = time.time() - _WATCH_S
        recent = [r for r in self._recent if r[0] >= since]
        latencies = sorted(ms for _, ms, _ in recent if ms is not None)
        if len(latencies) >= 5:
            p99 = latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))]
            if p99 > self.p99_warn_ms:
                self._warn(
                    "p99",
                    f"fast-path completions: P99 over the last {int(_WATCH_S)} s is {p99:.0f} ms, "
                    f"above the threshold of {self.p99_warn_ms:.0f} ms (setting p99_warn_ms)",
                )
        if len(recent) >= 20 and self.hit_rate_floor > 0:
            rate = sum(1 for *_, hit in recent if hit) / len(recent)
            if rate < self.hit_rate_floor:
                self._warn(
                    "hit_rate",
                    f"completions: cache hit rate over the last {int(_WATCH_S)} s is "
                    f"{rate:.0%}, below the floor of {self.hit_rate_floor:.0%} "
                    f"(setting hit_rate_floor)",
                )

    def _warn(self, what: str, message: str) -> None:
        now = time.monotonic()
        if now - self._warned.get(what, -_WARN_EVERY_S) >= _WARN_EVERY_S:
            self._warned[what] = now
            log.warning("%s", message)

    # -- readers ---------------------------------------------------------------------------
    def rows(self, since: float) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM requests WHERE at >= ? ORDER BY at", (since,)
            )
            return [dict(zip(_COLUMNS, row, strict=True)) for row in cursor]

    def feedback_rows(self, since: float) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._conn.execute(
                "SELECT at, user, language, accepted FROM feedback_events WHERE at >= ?", (since,)
            )
            return [
                {"at": a, "user": u, "language": lang, "accepted": bool(acc)}
                for a, u, lang, acc in cursor
            ]

    def close(self) -> None:
        self.flush()
        self._stop.set()
        self._thread.join(timeout=5)
        with self._lock:
            self._conn.close()
