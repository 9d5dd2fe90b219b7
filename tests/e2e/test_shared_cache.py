"""Two daemon processes share one SQLite cache file: each reads what the other wrote."""

from __future__ import annotations

import sqlite3

from daemon.protocol import DoneEvent, parse_event
from tests.e2e.conftest import start_daemon
from tests.e2e.documents import LOAD_CONFIG, complete_body, unique


def done_of(daemon, body) -> DoneEvent:
    with daemon.http() as http, http.stream("POST", "/v1/complete", json=body) as response:
        assert response.status_code == 200
        events = [parse_event(line) for line in response.iter_lines() if line.strip()]
    assert isinstance(events[-1], DoneEvent)
    return events[-1]


def test_two_daemons_read_and_write_one_cache_file(tmp_path):
    first = start_daemon(tmp_path, fast_max_tokens=12)
    second = start_daemon(tmp_path, fast_max_tokens=12)
    try:
        assert first.health.cache_path == second.health.cache_path
        # A body cut off by its deadline is never cached: give a loaded machine time enough.
        from_first = complete_body(unique(LOAD_CONFIG), deadline_ms=60_000)
        from_second = complete_body(unique(LOAD_CONFIG), deadline_ms=60_000)

        computed = done_of(first, from_first)
        assert computed.cached is False
        reused = done_of(second, from_first)
        assert reused.cached is True and reused.text == computed.text

        computed = done_of(second, from_second)
        assert computed.cached is False
        reused = done_of(first, from_second)
        assert reused.cached is True and reused.text == computed.text
    finally:
        first.stop()
        second.stop()
    conn = sqlite3.connect(tmp_path / "cache.sqlite3")
    rows = conn.execute("SELECT count(*), sum(hit_count) FROM code_cache").fetchone()
    assert rows == (2, 2)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
