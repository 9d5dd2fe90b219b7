"""Faults: the result cache survives a killed daemon, a corrupt file, a full and a read-only disk.

Real daemons (the real embedded model, real SQLite), no mocks. It proves that:

- a daemon killed with SIGKILL at a random moment while completions are being computed and
  stored (20 rounds, on one cache file) leaves a SQLite file that passes ``integrity_check``,
  and loses no committed entry: every answer a client received as computed (``cached: false``,
  complete and verified, so the daemon stored it before sending ``done``) is answered from the
  cache by a daemon started afterwards;
- a cache file that is not a database at start is moved aside (``cache.sqlite3.corrupt-*``)
  and the daemon serves and stores normally in a new one;
- on a full filesystem completions are still answered, ``/health`` says the cache is not
  storing, and once there is space again results are stored and the status is back to "ok";
- on a read-only filesystem completions are still answered and the cache says it is not storing.
"""

from __future__ import annotations

import errno
import json
import random
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import RunningDaemon, start_daemon
from tests.e2e.documents import complete_body

ROUNDS = 20
SENDERS = 2
# Small budgets: a completion takes a fraction of a second, so many are stored in each round.
# No rate limit: the last daemon is sent every recorded request in a row.
FAST = {
    "fast_max_tokens": 6,
    "deep_max_tokens": 6,
    "fix_max_tokens": 8,
    "rate_limit_per_minute": 0,
}
DOCUMENTS = [
    "def add(a, b):\n    return ",
    "import os\n\nHOME = os.environ.get(",
    "values = [1, 2, 3]\ntotal = ",
    "def greet(name):\n    message = ",
    "class Point:\n    def __init__(self, x, y):\n        self.x = ",
]


def unique_body(rng: random.Random, path: str = "app.py") -> dict:
    # Each sender has a path of its own: a newer request for the same document replaces the
    # older one (an ``error`` event "replaced"), as when an editor's user types on.
    text = f"# {uuid.uuid4().hex}\n{rng.choice(DOCUMENTS)}"
    return complete_body(text, cache=True, mode="fast", path=path)


def stream(http: httpx.Client, body: dict) -> tuple[int, list[dict]]:
    with http.stream("POST", "/v1/complete", json=body) as response:
        if response.status_code != 200:
            response.read()
            return response.status_code, []
        return 200, [json.loads(line) for line in response.iter_lines() if line.strip()]


def done_of(http: httpx.Client, body: dict) -> dict:
    status, events = stream(http, body)
    assert status == 200
    assert events and events[-1]["event"] == "done", events[-1:]
    return events[-1]


def stored(done: dict) -> bool:
    """Whether the daemon stored this answer before sending its ``done`` (complete, verified)."""
    return (
        done["cached"] is False
        and done["finish_reason"] in ("stop", "length")
        and done.get("verified") is True
    )


def integrity(path: Path) -> str:
    # Read-only, so the WAL the killed daemon left stays for the next daemon to recover.
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        result: str = conn.execute("PRAGMA integrity_check").fetchone()[0]
        return result
    finally:
        conn.close()


def entries(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        count: int = conn.execute("SELECT count(*) FROM code_cache").fetchone()[0]
        return count
    finally:
        conn.close()


def sender(
    url: str,
    seed: int,
    stop: threading.Event,
    answered: threading.Event,
    seen: list[dict],
    unstored: list,
) -> None:
    """Send unique completions until told to stop or the daemon dies; record stored answers."""
    rng = random.Random(seed)
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as http:
        while not stop.is_set():
            body = unique_body(rng, f"sender{seed % SENDERS}.py")
            try:
                status, events = stream(http, body)
            except (httpx.HTTPError, json.JSONDecodeError):
                return  # killed mid-request
            if status == 429:
                time.sleep(0.05)
            if status != 200 or not events or events[-1]["event"] != "done":
                continue
            if stored(events[-1]):
                seen.append(body)
                answered.set()
            else:
                unstored.append(events[-1])


def test_sigkill_during_cache_writes_loses_nothing_committed(tmp_path):
    cache = tmp_path / "cache.sqlite3"
    rng = random.Random(20261130)
    recorded: list[dict] = []
    unstored: list[dict] = []
    per_round = []
    for round_no in range(ROUNDS):
        daemon = start_daemon(tmp_path, cache_path=cache, **FAST)
        stop = threading.Event()
        answered = threading.Event()
        seen: list[dict] = []
        threads = [
            threading.Thread(
                target=sender,
                args=(daemon.url, round_no * SENDERS + i, stop, answered, seen, unstored),
                name=f"fault-sender-{i}",
            )
            for i in range(SENDERS)
        ]
        try:
            for thread in threads:
                thread.start()
            # Kill once answers are flowing (a loaded machine may be slow to give the first),
            # at a random moment: with two senders, one is usually being stored or sent.
            answered.wait(timeout=60)
            time.sleep(rng.uniform(0.0, 1.5))
            daemon.process.kill()  # SIGKILL: no shutdown, no checkpoint, no close
            daemon.process.wait(timeout=30)
        finally:
            stop.set()
            daemon.stop()
            for thread in threads:
                thread.join(timeout=90)
        assert not any(t.is_alive() for t in threads)
        assert daemon.process.returncode == -9
        assert integrity(cache) == "ok", f"round {round_no}"
        recorded.extend(seen)
        per_round.append(len(seen))

    print(
        f"\nfaults: {ROUNDS} SIGKILLs, {len(recorded)} answers the clients saw stored "
        f"(per round {per_round}), {len(unstored)} answered without storing; "
        f"{entries(cache)} entries in the file"
    )
    assert len(recorded) >= ROUNDS // 2, "too few answers were computed to prove anything"
    daemon = start_daemon(tmp_path, cache_path=cache, **FAST)
    try:
        with daemon.http() as http:
            lost = []
            for body in recorded:
                done = done_of(http, body)
                if not (done["cached"] is True and done.get("cache_match") == "exact"):
                    lost.append((body["text"].split("\n", 1)[0], done["cached"]))
            assert http.get("/health").json()["cache_status"] == "ok"
    finally:
        daemon.stop()
    assert not lost, f"{len(lost)} of {len(recorded)} committed answers were lost: {lost[:5]}"
    assert integrity(cache) == "ok"


def test_a_corrupt_cache_file_is_moved_aside_and_a_new_one_used(tmp_path):
    cache = tmp_path / "cache.sqlite3"
    garbage = b"this is not a SQLite database\x00\xff" * 512
    cache.write_bytes(garbage)
    daemon = start_daemon(tmp_path, cache_path=cache, **FAST)
    try:
        aside = sorted(tmp_path.glob("cache.sqlite3.corrupt-*"))
        assert len(aside) == 1, sorted(p.name for p in tmp_path.iterdir())
        assert aside[0].read_bytes() == garbage
        assert daemon.health.cache_status == "ok"
        assert daemon.health.cache_entries == 0
        body = unique_body(random.Random(1))
        with daemon.http() as http:
            first = done_of(http, body)
            assert stored(first), first
            again = done_of(http, body)
            assert again["cached"] is True and again["text"] == first["text"]
            health = http.get("/health").json()
        assert health["cache_status"] == "ok"
        assert health["cache_entries"] == 1
    finally:
        daemon.stop()
    assert integrity(cache) == "ok"
    assert entries(cache) == 1


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs, unmounted afterwards; skips where mounting is not permitted."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here (needs root/CAP_SYS_ADMIN): {result.stderr.strip()}"
        )
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


def fill(directory: Path) -> Path:
    """Write a file in ``directory`` until the filesystem is full."""
    filler = directory / "filler"
    chunk = b"\0" * 4096
    with filler.open("wb", buffering=0) as out:
        while True:
            try:
                out.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break
    return filler


def health(http: httpx.Client) -> dict:
    response = http.get("/health")
    assert response.status_code == 200
    data: dict = response.json()
    return data


def test_a_full_then_read_only_filesystem_only_stops_storing(tmp_path, tiny_tmpfs):
    cache = tiny_tmpfs / "cache.sqlite3"
    rng = random.Random(7)
    daemon: RunningDaemon | None = start_daemon(tmp_path, cache_path=cache, **FAST)
    try:
        assert daemon is not None
        with daemon.http() as http:
            assert stored(done_of(http, unique_body(rng)))
            assert health(http)["cache_status"] == "ok"
            stored_before = health(http)["cache_entries"]

            filler = fill(tiny_tmpfs)
            for _ in range(3):
                done = done_of(http, unique_body(rng))
                assert done["cached"] is False
            state = health(http)
            assert state["cache_status"].startswith("not storing"), state["cache_status"]
            assert state["cache_entries"] == stored_before

            filler.unlink()
            done = done_of(http, unique_body(rng))
            assert stored(done), done
            state = health(http)
            assert state["cache_status"] == "ok"
            assert state["cache_entries"] == stored_before + 1

        # A filesystem with a file open for writing cannot be remounted read-only (EBUSY):
        # stop the daemon, remount, and start one on the read-only cache.
        daemon.stop()
        daemon = None
        subprocess.run(["mount", "-o", "remount,ro", str(tiny_tmpfs)], check=True)
        daemon = start_daemon(tmp_path, cache_path=cache, **FAST)
        with daemon.http() as http:
            for _ in range(3):
                status, events = stream(http, unique_body(rng))
                assert status == 200
                assert events[-1]["event"] == "done", events[-1]
                assert events[-1]["cached"] is False
            state = health(http)
            assert state["cache_status"].startswith("not storing"), state["cache_status"]
            assert state["cache_entries"] == stored_before + 1
    finally:
        if daemon is not None:
            daemon.stop()
