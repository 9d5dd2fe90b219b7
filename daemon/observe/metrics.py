"""One record per request, kept in SQLite, and the Prometheus view of the same records.
A thread of its own writes the records and warns when latency, hits or acceptance slip.
"""

from __future__ import annotations

import json
import logging
import math
import queue
import sqlite3
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from daemon.observe import metrics_file
from daemon.observe.metrics_file import REQUEST_COLUMNS, connect
from daemon.observe.quality import ALERT_WINDOW_S, HitAlarm, acceptance_split
from daemon.observe.stats import percentile

log = logging.getLogger(__name__)

# The quantiles of time to first token /metrics shows over the recent window.
QUANTILES = (0.5, 0.9, 0.99)
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
    request_id: str | None = None
    checked: bool | None = None  # False: no checker for the language judged ``verified``


@dataclass
class FeedbackRecord:
    user: str
    language: str | None
    accepted: bool
    at: float = field(default_factory=time.time)
    request_id: str | None = None  # the answer's, as its events carried it


def _row(record: RequestRecord) -> tuple[Any, ...]:
    return tuple(
        (json.dumps(record.stages) if record.stages else None)
        if column == "stages"
        else getattr(record, column)
        for column in REQUEST_COLUMNS
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
            "assist_feedback",
            "Answers accepted or rejected; answer: a cache hit, fresh, or unlinked (not known)",
            ["language", "accepted", "answer"],
            registry=r,
        )
        self.verdicts = Counter(
            "assist_completion_verdicts",
            "Completions answered, by whether their final text verified (unchecked: no checker "
            "for the language)",
            ["language", "verdict"],
            registry=r,
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
        window = f"{ALERT_WINDOW_S / 60:.0f} min"
        self.recent_first_token = Gauge(
            "assist_first_token_recent_seconds",
            f"Time to first token of the completions the model wrote in the last {window}, by "
            "quantile (nearest rank of the records)",
            ["quantile"],
            registry=r,
        )
        self.recent_acceptance = Gauge(
            "assist_acceptance_recent_ratio",
            f"Share of feedback in the last {window} that accepted the answer, on cache hits "
            "and on fresh answers",
            ["answer"],
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
        if record.task == "complete" and record.outcome == "done" and record.verified is not None:
            verdict = "verified" if record.verified else "failed"
            if record.checked is False:
                verdict = "unchecked"
            self._child(self.verdicts, language, verdict).inc()
        if record.task == "fix" and record.outcome == "done":
            if record.changed:
                result = "fixed"
            elif record.verified:
                result = "nothing_to_fix"
            else:
                result = "not_fixed"
            self.fixes.labels(result).inc()

    def observe_feedback(self, record: FeedbackRecord, cached: bool | None) -> None:
        """A feedback event, and whether the answer it concerns was a cache hit (None: not
        known)."""
        answer = "unlinked" if cached is None else ("hit" if cached else "fresh")
        language = record.language or "unknown"
        self.feedback.labels(language, str(record.accepted).lower(), answer).inc()

    def show_recent(self, split: dict[str, Any], first_tokens: list[float]) -> None:
        """The recent figures: acceptance per side (``acceptance_split``), and time to first
        token's quantiles (NaN where there is nothing to measure)."""
        for answer in ("hit", "fresh"):
            rate = split[f"{answer}_acceptance_rate"]
            self.recent_acceptance.labels(answer).set(math.nan if rate is None else rate)
        for quantile in QUANTILES:
            value = percentile(first_tokens, quantile)
            seconds = math.nan if value is None else value / 1000
            self.recent_first_token.labels(f"{quantile:g}").set(seconds)


class MetricsRecorder:
    """The API hands each finished request's record here; a thread of its own writes records in
    batches and updates the Prometheus collectors, so the request's hot path only puts a small
    object on a queue. Records are bounded by age and count. The same thread watches the recent
    fast-path completions, the cache hit rate and the acceptance of cache hits, and warns in the
    daemon's log when the P99 goes over its threshold, the hit rate under its floor, or hits are
    accepted clearly less often than fresh answers (``daemon.observe.quality``)."""

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
        self._alarm = HitAlarm()
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
                self._watch_hits()

    def _write(self, batch: list[Any]) -> None:
        requests = [r for r in batch if isinstance(r, RequestRecord)]
        feedback = [r for r in batch if isinstance(r, FeedbackRecord)]
        answers: list[bool | None] = [None] * len(feedback)
        try:
            with self._lock:
                rows = [(f.at, f.user, f.language, int(f.accepted), f.request_id) for f in feedback]
                metrics_file.insert(self._conn, [_row(r) for r in requests], rows)
                # Which answers the feedback concerns (their records are written by now).
                answers = [
                    metrics_file.answer_was_cached(self._conn, f.request_id) for f in feedback
                ]
            self._written += len(requests)
            if self._written >= 1000:
                self._written = 0
                with self._lock:
                    before = time.time() - self.retention_s
                    metrics_file.prune(self._conn, before, self.max_rows)
        except sqlite3.Error as exc:
            log.warning("metrics could not be written (%s); %d records lost", exc, len(batch))
        for item in requests:
            self.prometheus.observe(item)
            if item.task == "complete" and item.outcome == "done":
                fast = item.route == "fast" and not item.cached
                self._recent.append((item.at, item.total_ms if fast else None, item.cached))
        for mark, cached in zip(feedback, answers, strict=True):
            self.prometheus.observe_feedback(mark, cached)
        for item in batch:
            if isinstance(item, threading.Event):
                item.set()

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

    def _watch_hits(self) -> None:
        """Warn, at most once every ``ALERT_EVERY_S``, when cache hits are accepted clearly less
        often than fresh answers (``daemon.observe.quality``)."""
        try:
            split = self.refresh_recent()
        except sqlite3.Error as exc:
            log.warning("metrics could not be read to check cache hits (%s)", exc)
            return
        line = self._alarm.check(split, time.monotonic())
        if line is not None:
            log.warning("%s", line)

    def _warn(self, what: str, message: str) -> None:
        now = time.monotonic()
        if now - self._warned.get(what, -_WARN_EVERY_S) >= _WARN_EVERY_S:
            self._warned[what] = now
            log.warning("%s", message)

    # -- readers ---------------------------------------------------------------------------
    def rows(self, since: float) -> list[dict[str, Any]]:
        with self._lock:
            return metrics_file.read_requests(self._conn, since)

    def feedback_rows(self, since: float) -> list[dict[str, Any]]:
        """Feedback events, each with whether its answer was a cache hit (``read_feedback``)."""
        with self._lock:
            return metrics_file.read_feedback(self._conn, since)

    def refresh_recent(self) -> dict[str, Any]:
        """The last ``ALERT_WINDOW_S``: acceptance of cache hits and of fresh answers
        (``acceptance_split``), returned, and shown with time to first token on /metrics."""
        since = time.time() - ALERT_WINDOW_S
        with self._lock:
            feedback = metrics_file.read_feedback(self._conn, since)
            first_tokens = metrics_file.fresh_first_tokens(self._conn, since)
        split = acceptance_split(feedback)
        self.prometheus.show_recent(split, first_tokens)
        return split

    def close(self) -> None:
        self.flush()
        self._stop.set()
        self._thread.join(timeout=5)
        with self._lock:
            self._conn.close()
