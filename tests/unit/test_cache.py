"""The result cache: keys, two levels, LRU eviction, incomplete answers, corruption, sharing."""

from __future__ import annotations

import multiprocessing
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from daemon.store.result_cache import CachedResult, ResultCache, cache_key

SAMPLING = {"temperature": 0.0, "max_tokens": 64, "stop": ["\n\n\n"]}


def key(tokens: list[int], **changes: object) -> str:
    args: dict[str, object] = {
        "fingerprint": "f" * 32,
        "format_name": "plain",
        "format_version": 1,
        "sampling": SAMPLING,
        "prompt_tokens": tokens,
    }
    args.update(changes)
    return cache_key(**args)  # type: ignore[arg-type]


def result(text: str = "return x", reason: str = "stop") -> CachedResult:
    return CachedResult(text=text, finish_reason=reason, tokens=3, language="python", model="m")


def test_key_is_stable_and_32_hex_digits():
    assert key([1, 2, 3]) == key([1, 2, 3])
    assert len(key([1, 2, 3])) == 32
    int(key([1, 2, 3]), 16)


@pytest.mark.parametrize(
    "change",
    [
        {"fingerprint": "0" * 32},
        {"format_name": "qwen2.5-coder"},
        {"format_version": 2},
        {"sampling": {**SAMPLING, "max_tokens": 65}},
        {"sampling": {**SAMPLING, "temperature": 0.2}},
        {"prompt_tokens": [1, 2, 4]},
        {"prompt_tokens": [1, 2, 3, 0]},
    ],
)
def test_key_changes_with_every_part_of_the_request(change):
    assert key([1, 2, 3], **change) != key([1, 2, 3])


def test_sampling_key_order_does_not_matter():
    reordered = {"stop": ["\n\n\n"], "max_tokens": 64, "temperature": 0.0}
    assert key([1], sampling=reordered) == key([1])


def test_put_then_get_from_memory_and_from_sqlite(tmp_path):
    cache = ResultCache(tmp_path / "c.sqlite3")
    cache.put("k1", result())
    assert cache.get_memory("k1") == result()
    fresh = ResultCache(tmp_path / "c.sqlite3")  # a second process's view: SQLite only
    assert fresh.get_memory("k1") is None
    assert fresh.get("k1") == result()
    assert fresh.get("nope") is None
    row = fresh.db.conn.execute(
        "SELECT hit_count, last_hit IS NOT NULL, language, model FROM code_cache"
    ).fetchone()
    assert row == (1, 1, "python", "m")


def test_a_completions_alternatives_confidence_and_faults_are_kept(tmp_path):
    kept = replace(result(), confidence=0.42, alternatives=("y", "z"), faults=("f",))
    ResultCache(tmp_path / "c.sqlite3").put("k1", kept)
    assert ResultCache(tmp_path / "c.sqlite3").get("k1") == kept


def test_a_cache_file_from_before_the_extra_column_gains_it(tmp_path):
    path = tmp_path / "c.sqlite3"
    ResultCache(path).put("old", result())
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE code_cache DROP COLUMN extra")
    cache = ResultCache(path)
    assert cache.get("old") == result()
    cache.put("new", replace(result(), confidence=0.5))
    assert ResultCache(path).get("new").confidence == 0.5


def test_an_unreadable_extra_column_is_ignored(tmp_path):
    path = tmp_path / "c.sqlite3"
    ResultCache(path).put("k1", replace(result(), confidence=0.5))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE code_cache SET extra = '[not json'")
    assert ResultCache(path).get("k1") == result()


def test_table_is_wal_with_the_documented_columns(tmp_path):
    cache = ResultCache(tmp_path / "c.sqlite3")
    conn = cache.db.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    columns = {row[1] for row in conn.execute("PRAGMA table_info(code_cache)")}
    assert {
        "prompt_hash",
        "completion",
        "language",
        "model",
        "created",
        "last_hit",
        "hit_count",
    } <= columns


@pytest.mark.parametrize("reason", ["cancelled", "deadline", "error"])
def test_incomplete_answers_are_refused(tmp_path, reason):
    cache = ResultCache(tmp_path / "c.sqlite3")
    with pytest.raises(ValueError, match="incomplete"):
        cache.put("k", result(reason=reason))
    assert cache.get("k") is None


def test_memory_level_is_a_bounded_lru(tmp_path):
    cache = ResultCache(tmp_path / "c.sqlite3", memory_entries=2)
    cache.put("a", result("A"))
    cache.put("b", result("B"))
    cache.get_memory("a")  # a is now more recent than b
    cache.put("c", result("C"))
    assert cache.get_memory("b") is None
    assert cache.get_memory("a") is not None and cache.get_memory("c") is not None


def test_entry_bound_evicts_least_recently_used(tmp_path):
    cache = ResultCache(tmp_path / "c.sqlite3", max_entries=10, memory_entries=0)
    for i in range(10):
        cache.put(f"k{i}", result(f"v{i}"))
    cache.get("k0")  # used recently: must survive
    for i in range(10, 12):
        cache.put(f"k{i}", result(f"v{i}"))
    evicted = cache.enforce_bounds()
    assert evicted >= 3
    left = {row[0] for row in cache.db.conn.execute("SELECT prompt_hash FROM code_cache")}
    assert "k0" in left and "k11" in left
    assert "k1" not in left
    assert len(left) <= 9


def test_byte_bound_evicts_until_under_the_limit(tmp_path):
    cache = ResultCache(tmp_path / "c.sqlite3", max_bytes=2000, memory_entries=0)
    for i in range(10):
        cache.put(f"k{i}", result("x" * 500))
    cache.enforce_bounds()
    total = cache.db.conn.execute("SELECT sum(size) FROM code_cache").fetchone()[0]
    assert total <= 2000
    assert cache.get("k9") is not None


def test_corrupt_file_is_moved_aside_and_replaced(tmp_path):
    path = tmp_path / "c.sqlite3"
    path.write_bytes(b"this is not a database at all" * 100)
    cache = ResultCache(path)
    cache.put("k", result())
    assert cache.get("k") == result()
    assert list(tmp_path.glob("c.sqlite3.corrupt-*"))


def test_clear_and_stats(tmp_path):
    cache = ResultCache(tmp_path / "c.sqlite3")
    cache.put("a", result("A"))
    cache.put("b", result("BB"))
    stats = cache.stats()
    assert stats["entries"] == 2 and stats["bytes"] == 3
    assert cache.clear() == 2
    assert cache.stats()["entries"] == 0
    assert cache.get("a") is None


def _writer(path: str, prefix: str, count: int) -> None:
    cache = ResultCache(Path(path), memory_entries=0)
    for i in range(count):
        cache.put(f"{prefix}{i}", result(f"{prefix}{i}"))
        cache.get(f"{prefix}{max(0, i - 1)}")
    cache.close()


def test_several_processes_write_one_file(tmp_path):
    path = str(tmp_path / "shared.sqlite3")
    ResultCache(Path(path)).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, p, 150)) for p in ("a", "b", "c")]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM code_cache").fetchone()[0] == 450
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
