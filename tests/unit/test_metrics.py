"""The metrics recorder: records written off the caller's thread, bounded, and counted."""

from __future__ import annotations

import stat

from daemon.observe.dashboard import render
from daemon.observe.metrics import FeedbackRecord, MetricsRecorder, RequestRecord
from daemon.observe.stats import summarize


def test_records_are_written_and_counted(tmp_path):
    recorder = MetricsRecorder(tmp_path / "m.sqlite3")
    try:
        recorder.record(
            RequestRecord(
                "complete",
                "python",
                "a.py",
                "alice",
                "done",
                total_ms=12.0,
                route="fast",
                cached=True,
                cache_match="typed",
            )
        )
        recorder.record(RequestRecord("fix", "go", "m.go", "bob", "error", error_code="timeout"))
        recorder.record(FeedbackRecord("alice", "python", True))
        recorder.flush()
        rows = recorder.rows(0)
        assert [r["task"] for r in rows] == ["complete", "fix"]
        assert recorder.feedback_rows(0)[0]["accepted"] is True
        registry = recorder.prometheus.registry
        hits = registry.get_sample_value(
            "assist_cache_hits_total", {"task": "complete", "language": "python", "match": "typed"}
        )
        errors = registry.get_sample_value(
            "assist_errors_total", {"task": "fix", "code": "timeout"}
        )
        assert hits == 1 and errors == 1
        assert stat.S_IMODE((tmp_path / "m.sqlite3").stat().st_mode) == 0o600
    finally:
        recorder.close()


def test_records_are_bounded_by_count(tmp_path):
    recorder = MetricsRecorder(tmp_path / "m.sqlite3", max_rows=100)
    try:
        for i in range(1200):
            recorder.record(
                RequestRecord("complete", "python", f"{i}.py", "u", "done", total_ms=1.0)
            )
        recorder.flush()
        assert len(recorder.rows(0)) <= 1200 - 1000 + 100
    finally:
        recorder.close()


def test_the_dashboard_renders_with_and_without_data():
    empty = summarize([], [], 3600, now=1000.0)
    page = render(empty, "model", "CPU", None)
    assert "No answered requests" in page and "CPU" in page
    rows = [
        {
            "at": 990.0,
            "task": "complete",
            "language": "rust",
            "path": "a.rs",
            "user": "u",
            "outcome": "done",
            "route": "fast",
            "cached": False,
            "total_ms": 150.0,
            "first_token_ms": 30.0,
            "tokens": 5,
            "verified": True,
            "changed": None,
            "request_id": "r1",
            "checked": True,
        },
    ]
    full = render(
        summarize(rows, [], 3600, now=1000.0),
        "model <b>",
        "CUDA",
        [
            {
                "name": "H200",
                "memory_used_mb": 1000,
                "memory_total_mb": 141000,
                "utilization_percent": 40,
            }
        ],
    )
    assert 'data-language="rust" data-bucket="100–500 ms" data-count="1"' in full
    assert "model &lt;b&gt;" in full  # escaped
    assert "H200" in full and "40%" in full
