"""Figures from records: nearest-rank percentiles, rates, heat map, series, windows."""

from __future__ import annotations

import pytest

from daemon.observe.stats import parse_window, percentile, summarize

NOW = 1_000_000.0


def row(**over):
    base = {
        "at": NOW - 10,
        "task": "complete",
        "language": "python",
        "path": "a.py",
        "user": "alice",
        "outcome": "done",
        "route": "fast",
        "cached": False,
        "total_ms": 100.0,
        "first_token_ms": 20.0,
        "tokens": 11,
        "verified": True,
        "changed": None,
        "request_id": None,
        "checked": True,
    }
    base.update(over)
    return base


def test_percentiles_are_nearest_rank_of_the_records():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50
    assert percentile(values, 0.9) == 90
    assert percentile(values, 0.99) == 99
    assert percentile([7.0], 0.99) == 7
    assert percentile([], 0.5) is None


def test_windows_parse():
    assert parse_window("90") == 90
    assert parse_window("15m") == 900
    assert parse_window("2h") == 7200
    assert parse_window("7d") == 604800
    with pytest.raises(ValueError):
        parse_window("soon")


def test_summary_groups_rates_and_heat():
    rows = [
        row(total_ms=50.0),
        row(total_ms=300.0, cached=True, tokens=0),
        row(total_ms=3000.0, language="go"),
        row(task="fix", changed=True, total_ms=900.0),
        row(task="fix", changed=False, verified=True, total_ms=5.0),  # nothing to fix
        row(task="fix", changed=False, verified=False, total_ms=800.0),  # no verified fix
        row(outcome="busy", total_ms=None),
        row(at=NOW - 7200),  # outside the window
    ]
    feedback = [
        {"at": NOW - 5, "user": "alice", "language": "python", "accepted": True, "cached": None},
        {"at": NOW - 5, "user": "alice", "language": "python", "accepted": False, "cached": None},
    ]
    stats = summarize(rows, feedback, 3600, now=NOW)
    groups = {(g["language"], g["task"]): g for g in stats["groups"]}
    python = groups[("python", "complete")]
    assert python["requests"] == 3 and python["answered"] == 2 and python["refused"] == 1
    assert python["cache_hit_rate"] == 0.5 and python["acceptance_rate"] == 0.5
    assert python["tokens_per_second"] == pytest.approx(10 / 0.030, abs=0.1)
    fix = groups[("python", "fix")]
    assert fix["fixes"] == 2 and fix["fix_rate"] == 0.5
    heat = stats["heatmap"]["rows"]
    assert heat["python"]["0–100 ms"] == 2 and heat["python"]["100–500 ms"] == 1
    assert heat["go"]["over 2 s"] == 1
    assert stats["totals"]["requests"] == 7
    assert sum(point["requests"] for point in stats["series"]) == 6


def test_grouping_by_user_and_path():
    rows = [row(user="alice"), row(user="bob", path="b.py")]
    by_user = summarize(rows, [], 3600, by="user", now=NOW)
    assert sorted(g["user"] for g in by_user["groups"]) == ["alice", "bob"]
    by_path = summarize(rows, [], 3600, by="path", now=NOW)
    assert sorted(g["path"] for g in by_path["groups"]) == ["a.py", "b.py"]
    with pytest.raises(ValueError):
        summarize(rows, [], 3600, by="colour", now=NOW)
