"""Cache and quality figures from records in a real metrics file: acceptance of cache hits
against fresh answers, the share of completions that verified, time to first token's tail, the
alert when hits fall behind, and the upgrade of a file an older assist wrote."""

from __future__ import annotations

import logging
import math
import sqlite3
import time

import pytest

from daemon.observe.dashboard import render
from daemon.observe.metrics import FeedbackRecord, MetricsRecorder, RequestRecord
from daemon.observe.metrics_file import connect, read_feedback
from daemon.observe.quality import (
    ALERT_EVERY_S,
    ALERT_MIN_FEEDBACK,
    HitAlarm,
    acceptance_split,
    hits_behind,
)
from daemon.observe.stats import summarize


def completion(
    request_id: str, *, cached: bool = False, language: str = "python", **over: object
) -> RequestRecord:
    """An answered completion's record: a fresh, verified answer unless told otherwise."""
    record = RequestRecord("complete", language, "a.py", "alice", "done", route="fast")
    record.request_id, record.cached = request_id, cached
    record.verified = record.checked = True
    record.total_ms = 5.0 if cached else 200.0
    record.first_token_ms = 5.0 if cached else 40.0
    record.tokens = 0 if cached else 12
    for name, value in over.items():
        setattr(record, name, value)
    return record


def mark(request_id: str | None, accepted: bool) -> FeedbackRecord:
    return FeedbackRecord("alice", "python", accepted, request_id=request_id)


@pytest.fixture
def recorder(tmp_path):
    recorder = MetricsRecorder(tmp_path / "metrics.sqlite3")
    yield recorder
    recorder.close()


def sample(recorder: MetricsRecorder, name: str, **labels: str) -> float | None:
    return recorder.prometheus.registry.get_sample_value(name, labels)


def test_feedback_is_split_by_whether_its_answer_was_a_cache_hit(recorder):
    # Ten answers the model wrote (first token 10..100 ms), four cache hits.
    for i in range(10):
        recorder.record(completion(f"fresh-{i}", first_token_ms=10.0 * (i + 1)))
    for i in range(4):
        recorder.record(completion(f"hit-{i}", cached=True))
    recorder.record(completion("no-parser", language="toml", checked=False))
    recorder.record(completion("broken", verified=False))
    recorder.record(RequestRecord("fix", "python", "b.py", "alice", "done", verified=False))
    for i in range(10):
        recorder.record(mark(f"fresh-{i}", accepted=i < 9))  # 9 of 10
    for i in range(4):
        recorder.record(mark(f"hit-{i}", accepted=i < 1))  # 1 of 4
    recorder.record(mark("nobody-answered-this", accepted=False))
    recorder.record(mark(None, accepted=True))
    recorder.flush()

    totals = summarize(recorder.rows(0), recorder.feedback_rows(0), 3600)["totals"]
    assert totals["hit_feedback"] == 4 and totals["hit_acceptance_rate"] == 0.25
    assert totals["fresh_feedback"] == 10 and totals["fresh_acceptance_rate"] == 0.9
    assert totals["unlinked_feedback"] == 2
    assert totals["feedback"] == 16
    # 16 completions; the one in TOML had no checker; 14 of the other 15 verified.
    assert totals["unchecked"] == 1
    assert totals["verified_rate"] == round(14 / 15, 4)
    # Time to first token of the answers the model wrote (hits are not in it): 12 of them.
    assert totals["first_token_p50_ms"] == 40.0
    assert totals["first_token_p90_ms"] == 90.0
    assert totals["first_token_p99_ms"] == 100.0

    accepted_hits = {"language": "python", "accepted": "true", "answer": "hit"}
    rejected_hits = {**accepted_hits, "accepted": "false"}
    assert sample(recorder, "assist_feedback_total", **accepted_hits) == 1
    assert sample(recorder, "assist_feedback_total", **rejected_hits) == 3
    assert sample(recorder, "assist_feedback_total", **{**accepted_hits, "answer": "fresh"}) == 9
    unlinked = {"language": "python", "accepted": "false", "answer": "unlinked"}
    assert sample(recorder, "assist_feedback_total", **unlinked) == 1
    verdicts = "assist_completion_verdicts_total"
    assert sample(recorder, verdicts, language="python", verdict="verified") == 14
    assert sample(recorder, verdicts, language="python", verdict="failed") == 1
    assert sample(recorder, verdicts, language="toml", verdict="unchecked") == 1

    recorder.refresh_recent()
    assert sample(recorder, "assist_acceptance_recent_ratio", answer="hit") == 0.25
    assert sample(recorder, "assist_acceptance_recent_ratio", answer="fresh") == 0.9
    assert sample(recorder, "assist_first_token_recent_seconds", quantile="0.9") == 0.09
    assert sample(recorder, "assist_first_token_recent_seconds", quantile="0.99") == 0.1


def test_feedback_written_before_its_answer_is_still_linked(recorder):
    # Feedback queued ahead of its request's record (the same batch): linked all the same.
    recorder.record(mark("early", accepted=True))
    recorder.record(completion("early", cached=True))
    recorder.flush()
    assert recorder.feedback_rows(0)[0]["cached"] is True
    labels = {"language": "python", "accepted": "true", "answer": "hit"}
    assert sample(recorder, "assist_feedback_total", **labels) == 1


def test_the_dashboard_shows_the_figures(recorder):
    recorder.record(completion("a", first_token_ms=70.0))
    recorder.record(completion("b", cached=True))
    recorder.record(completion("c", language="toml", checked=False))
    recorder.record(mark("a", accepted=True))
    recorder.record(mark("b", accepted=False))
    recorder.flush()
    page = render(summarize(recorder.rows(0), recorder.feedback_rows(0), 3600), "m", "CPU", None)
    quality = page[page.index('<table id="quality">') :]
    quality = quality[: quality.index("</table>")]
    all_row = quality[quality.index('<tr class="all">') :]
    assert '<td data-figure="hit_acceptance_rate">0%</td>' in all_row
    assert '<td data-figure="fresh_acceptance_rate">100%</td>' in all_row
    assert '<td data-figure="unchecked">1</td>' in all_row
    assert '<td data-figure="first_token_p99_ms">70 ms</td>' in all_row


def test_with_no_feedback_the_recent_figures_are_not_numbers(recorder):
    recorder.refresh_recent()
    hits = sample(recorder, "assist_acceptance_recent_ratio", answer="hit")
    first = sample(recorder, "assist_first_token_recent_seconds", quantile="0.99")
    assert hits is not None and math.isnan(hits)
    assert first is not None and math.isnan(first)


def feedback_on(recorder: MetricsRecorder, hits: int, hit_accepted: int, fresh: int, fresh_ok: int):
    """Answers and feedback through the recorder; the split the alert judges, from the file."""
    for i in range(hits):
        recorder.record(completion(f"h{i}", cached=True))
        recorder.record(mark(f"h{i}", accepted=i < hit_accepted))
    for i in range(fresh):
        recorder.record(completion(f"f{i}"))
        recorder.record(mark(f"f{i}", accepted=i < fresh_ok))
    recorder.flush()
    return acceptance_split(recorder.feedback_rows(0))


def test_the_alert_fires_when_hits_are_accepted_clearly_less_often(recorder):
    split = feedback_on(recorder, hits=20, hit_accepted=10, fresh=20, fresh_ok=18)
    line = hits_behind(split)
    assert line is not None
    assert "50% of 20" in line and "90% of 20" in line and "assist cache clear" in line


@pytest.mark.parametrize(
    ("hits", "hit_accepted", "fresh", "fresh_ok"),
    [
        (ALERT_MIN_FEEDBACK - 1, 0, 20, 20),  # too few hits to tell
        (20, 0, ALERT_MIN_FEEDBACK - 1, 19),  # too few fresh answers
        (20, 16, 20, 20),  # hits accepted 0.8 times as often: on the line, not under it
        (20, 5, 20, 5),  # both as bad: not the cache's doing
    ],
)
def test_the_alert_stays_quiet_without_a_clear_gap(recorder, hits, hit_accepted, fresh, fresh_ok):
    assert hits_behind(feedback_on(recorder, hits, hit_accepted, fresh, fresh_ok)) is None


def test_the_alert_is_rate_limited():
    behind = {
        "hit_feedback": 30,
        "hit_acceptance_rate": 0.2,
        "fresh_feedback": 30,
        "fresh_acceptance_rate": 0.9,
        "unlinked_feedback": 0,
    }
    alarm = HitAlarm()
    assert alarm.check(behind, now=100.0) is not None
    assert alarm.check(behind, now=100.0 + ALERT_EVERY_S - 1) is None
    assert alarm.check(behind, now=100.0 + ALERT_EVERY_S) is not None
    # A check that finds nothing wrong does not start the wait.
    quiet = HitAlarm()
    assert quiet.check({**behind, "hit_acceptance_rate": 0.9}, now=0.0) is None
    assert quiet.check(behind, now=1.0) is not None


def test_the_recorder_logs_one_line_when_hits_fall_behind(tmp_path, caplog):
    recorder = MetricsRecorder(tmp_path / "metrics.sqlite3", check_s=0.05)
    try:
        with caplog.at_level(logging.WARNING, logger="daemon.observe.metrics"):
            feedback_on(recorder, hits=25, hit_accepted=5, fresh=25, fresh_ok=25)
            deadline = time.monotonic() + 10
            while "cache hits are accepted" not in caplog.text and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # several more checks: still the one line
    finally:
        recorder.close()
    lines = [r.getMessage() for r in caplog.records if "cache hits are accepted" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "20% of 25" in lines[0] and "100% of 25" in lines[0]


# The metrics file as the first version of assist wrote it: no request ids, no ``checked``.
OLD_SCHEMA = """
CREATE TABLE requests (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, task TEXT NOT NULL, language TEXT, path TEXT,
    user TEXT NOT NULL, outcome TEXT NOT NULL, route TEXT, finish_reason TEXT,
    cached INTEGER NOT NULL, cache_match TEXT, total_ms REAL, first_token_ms REAL,
    prompt_ms REAL, queue_ms REAL, tokens INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL,
    stages TEXT, verified INTEGER, changed INTEGER, error_code TEXT
);
CREATE INDEX requests_at ON requests (at);
CREATE TABLE feedback_events (
    at REAL NOT NULL, user TEXT NOT NULL, language TEXT, accepted INTEGER NOT NULL
);
CREATE INDEX feedback_events_at ON feedback_events (at);
"""


def test_an_older_metrics_file_is_upgraded_in_place_keeping_its_rows(tmp_path):
    path = tmp_path / "metrics.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(OLD_SCHEMA)
    now = time.time()
    old.executemany(
        "INSERT INTO requests (at, task, language, user, outcome, cached, total_ms, "
        "first_token_ms, tokens, prompt_tokens, verified) VALUES (?, 'complete', 'python', "
        "'bob', 'done', ?, 100.0, 30.0, 8, 50, 1)",
        [(now - 60, 0), (now - 50, 1)],
    )
    old.execute("INSERT INTO feedback_events VALUES (?, 'bob', 'python', 1)", (now - 40,))
    old.commit()
    old.close()

    recorder = MetricsRecorder(path)
    try:
        recorder.record(completion("new-hit", cached=True))
        recorder.record(mark("new-hit", accepted=False))
        recorder.flush()
        rows = recorder.rows(0)
        feedback = recorder.feedback_rows(0)
    finally:
        recorder.close()
    assert [(r["user"], r["request_id"], r["checked"]) for r in rows] == [
        ("bob", None, None),
        ("bob", None, None),
        ("alice", "new-hit", 1),
    ]
    assert [(f["user"], f["cached"]) for f in feedback] == [("bob", None), ("alice", True)]
    totals = summarize(rows, feedback, 3600)["totals"]
    assert totals["requests"] == 3 and totals["verified_rate"] == 1.0
    assert totals["unlinked_feedback"] == 1 and totals["hit_acceptance_rate"] == 0.0
    # Opening it again (the CLI does, beside the daemon) changes nothing more.
    again = connect(path)
    try:
        columns = [row[1] for row in again.execute("PRAGMA table_info(requests)")]
        assert columns.count("request_id") == 1 and columns.count("checked") == 1
        assert len(read_feedback(again, 0)) == 2
    finally:
        again.close()
