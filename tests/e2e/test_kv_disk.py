"""Saved KV states on disk with the real model: a document evaluated before a clean shutdown is
restored from its file after a restart instead of being evaluated again, and answers as it did;
a corrupt file is removed and the prompt evaluated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from daemon.engine.kv_disk import DiskStates, state_owner
from daemon.engine.kv_states import SequenceStates
from daemon.engine.scheduler import Scheduler
from daemon.engine.worker import Engine
from daemon.protocol import DoneEvent, parse_event
from models.loaded import LoadedModel
from tests.e2e.conftest import RunningDaemon, start_daemon
from tests.e2e.documents import complete_body, unique
from tests.e2e.test_engine_batching import (
    LONG_FILE,
    answer,
    assert_same_answer,
    reused,
    tokens_of,
)

# About 210 tokens: past 200, and short enough that no machine, however slow, cuts its window
# to answer in time (a window is never cut below 256 tokens), so both daemons read one prompt.
DOCUMENT = LONG_FILE[: LONG_FILE.index("def scale_3(")] + "def total(values):\n    "


def complete(daemon: RunningDaemon, body: dict[str, Any]) -> DoneEvent:
    with daemon.http() as client, client.stream("POST", "/v1/complete", json=body) as response:
        assert response.status_code == 200, response.read()
        events = [parse_event(line) for line in response.iter_lines() if line.strip()]
    done = events[-1]
    assert isinstance(done, DoneEvent), done
    return done


def health(daemon: RunningDaemon) -> dict[str, Any]:
    with daemon.http() as client:
        return dict(client.get("/health").json())


def evaluated(before: dict[str, Any], after: dict[str, Any]) -> int:
    """The prompt tokens the engine evaluated between two ``/health`` answers."""
    return int(
        after["engine"]["prompt_tokens_evaluated"] - before["engine"]["prompt_tokens_evaluated"]
    )


def test_after_a_restart_a_document_seen_before_is_restored_from_disk(tmp_path: Path):
    # The result cache is bypassed: the engine itself must answer both times. One candidate:
    # each other candidate's first token would be evaluated too.
    body = complete_body(unique(DOCUMENT), cache=False, mode="fast", max_tokens=12)
    first = start_daemon(tmp_path, candidates=1)
    try:
        start = health(first)
        cold = complete(first, body)
        cold_evaluated = evaluated(start, health(first))
    finally:
        first.stop()
    assert first.process.returncode == 0  # a clean shutdown
    assert 200 <= cold.prompt_tokens <= 256 and cold_evaluated >= cold.prompt_tokens - 2
    assert list((tmp_path / "kv").glob("*.kvstate")), "nothing written at shutdown"

    second = start_daemon(tmp_path, candidates=1)
    try:
        start = health(second)
        assert start["workload"]["kv_disk_states"] >= 1  # found at start
        warm = complete(second, body)
        after = health(second)
    finally:
        second.stop()
    workload = after["workload"]
    assert workload["kv_disk_restored"] == 1
    assert workload["kv_disk_tokens_restored"] >= cold.prompt_tokens - 1
    assert warm.prompt_tokens == cold.prompt_tokens and evaluated(start, after) <= 2
    assert warm.text.strip()


def disk_engine(model: LoadedModel, folder: Path) -> Engine:
    disk = DiskStates(folder, state_owner(model), 1024 * 1024 * 1024)
    return Engine(model, Scheduler(4, 4), SequenceStates(0, disk), parallel=2)


def test_a_restored_state_answers_as_evaluated_and_a_corrupt_one_is_removed(
    engine_model: LoadedModel, tmp_path: Path
):
    tokens = tokens_of(engine_model, unique(DOCUMENT))
    runs = []
    for _ in range(2):  # cold, then after a restart on the same folder
        engine = disk_engine(engine_model, tmp_path)
        engine.start()
        try:
            runs.append((answer(engine, tokens, 12), engine.report().saved_states))
        finally:
            engine.close()
    (cold, _), (warm, restored) = runs
    assert reused(cold) == 0
    assert reused(warm) == len(tokens) - 1
    assert restored.kv_disk_restored == 1 and restored.kv_disk_tokens_restored >= len(tokens)
    assert_same_answer(warm[-1].own, cold[-1].own)

    # The file now holds the prompt and its answer (it replaced the prompt's own file). Where
    # the restored answer went another way at a near tie (as ``assert_same_answer`` allows), its
    # sequence is not a prefix of the first file and was written beside it: only the file the
    # next start restores first is kept, so the one corrupted below is the one it reads.
    files = sorted(tmp_path.glob("*.kvstate"))
    assert files and all(f.stat().st_size > 0 for f in files)
    chosen, shared = DiskStates(tmp_path, state_owner(engine_model), 1024**3).best(
        np.asarray(tokens, dtype=np.intc)
    )
    assert chosen is not None and shared >= len(tokens) - 1
    for other in files:
        if other.name != chosen:
            other.unlink()
    path = tmp_path / chosen
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x10  # one bit of the KV data
    path.write_bytes(raw)
    engine = disk_engine(engine_model, tmp_path)
    engine.start()
    try:
        assert engine.cached_prefix(tokens) >= len(tokens) - 1  # indexed from its header
        again = answer(engine, tokens, 12)
        report = engine.report().saved_states
        assert not path.exists()
    finally:
        engine.close()
    assert reused(again) == 0
    assert report.kv_disk_rejected == 1 and report.kv_disk_restored == 0
    assert_same_answer(again[-1].own, cold[-1].own)
