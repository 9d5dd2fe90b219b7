"""``assist loadtest`` against real daemons: its report accounts for every request it sent, agrees
with the daemon's own ``/metrics``, and under more misses than the engine takes sees only answers
and 429s with ``Retry-After``, none hung.

Run with ``-s`` to see the reports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.e2e.conftest import start_daemon, start_guarded

ASSIST = [sys.executable, "-m", "daemon.cli", "loadtest"]


def loadtest(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [*ASSIST, *args, "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
    )
    print(run.stderr)
    print(run.stdout)
    return run


def rows_of(report: dict) -> dict[str, dict]:
    return {row["kind"]: row for row in report["kinds"]}


def check_accounted(report: dict, sent: int) -> dict[str, dict]:
    """Every request sent is counted once, in its kind and in all; the percentiles are ordered."""
    rows = rows_of(report)
    for row in rows.values():
        assert row["sent"] == row["ok"] + row["refused"] + row["errors"] + row["hung"], row
        if row["ok"]:
            assert row["p50_ms"] <= row["p90_ms"] <= row["p99_ms"], row
            assert row["mean_ms"] > 0
    total = rows.pop("all")
    assert total["sent"] == sent == sum(row["sent"] for row in rows.values())
    assert total["ok"] == sum(row["ok"] for row in rows.values())
    assert 0 < report["rate"]["held"] <= report["rate"]["asked"] * 1.05
    return {**rows, "all": total}


def test_hits_and_typing_at_a_modest_rate_all_come_from_the_cache(tmp_path):
    # Prompts of 256 tokens, the least a window is cut to: the daemon cuts a window to answer in
    # time by the engine's measured speed, and on a loaded machine a place asked twice can get
    # windows of two sizes, two cache keys, and miss. Here every request gets its whole window.
    daemon = start_daemon(
        tmp_path, prompt_budget_tokens=256, suffix_budget_tokens=64, context_budget_tokens=0
    )
    try:
        run = loadtest(
            "--url", daemon.url, "--mix", "hits=2,typing=1", "--duration", "4",
            "--places", "4", "--expected", "8",
        )  # fmt: skip
    finally:
        daemon.stop()
    assert run.returncode in (0, 1), run.stderr
    report = json.loads(run.stdout)
    assert report["options"]["rate"] == 9.6  # 120% of --expected
    warm = report["warm"]
    assert warm["places"] == 4 and warm["cached"] >= 1 and warm["typing"] >= 1, warm
    rows = check_accounted(report, 38)
    assert rows["hits"]["sent"] == 25 and rows["typing"]["sent"] == 13
    for kind in ("hits", "typing"):
        row = rows[kind]
        assert row["ok"] == row["sent"] and row["cached"] == row["ok"], row
    assert report["errors"] == {} and report["refusals"] == {}
    # The daemon counted what the test sent: each an answer, each from the cache.
    during = report["daemon"]
    assert during["requests"] == {"done": 38}
    assert sum(during["hits"].values()) == 38 and during["hits"].get("typed", 0) >= 13
    # Held or not, the exit status says the verdict.
    assert (run.returncode == 0) == report["verdict"]["held"]


def test_misses_beyond_the_engine_get_answers_or_429s_and_none_hangs(tmp_path):
    daemon, token = start_guarded(tmp_path, fast_max_tokens=8)
    try:
        url = ["--url", daemon.url]
        refused = loadtest(*url, "--only", "misses", "--duration", "1", timeout=60)
        assert refused.returncode == 1
        assert "needs a valid token: --token" in refused.stderr
        run = loadtest(
            *url, "--token", token, "--only", "misses", "--duration", "4",
            "--timeout", "120", "--expected", "5",
        )  # fmt: skip
    finally:
        daemon.stop()
    report = json.loads(run.stdout)
    rows = check_accounted(report, 24)
    misses = rows["misses"]
    assert misses["errors"] == 0 and misses["hung"] == 0, report["errors"]
    assert misses["ok"] > 0 and misses["refused"] > 0, misses
    assert misses["cached"] == 0
    assert report["refusals"] == {"busy": misses["refused"]}
    # The daemon refused as many as the test counted, and answered the rest.
    assert report["daemon"]["requests"] == {"done": misses["ok"], "busy": misses["refused"]}
    assert run.returncode == 1 and not report["verdict"]["held"]
    assert any("refused with 429" in reason for reason in report["verdict"]["reasons"])
