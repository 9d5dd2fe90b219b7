"""An engine's typed report: the figures /health shows, in the keys and order it always showed
them, and a remote engine's report with its backends and no saved states of its own."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from daemon.engine.interface import ServingEngine
from daemon.engine.jobs import Budget
from daemon.engine.remote.engine import RemoteEngine
from daemon.engine.remote.pool import BackendPool
from daemon.engine.report import (
    LocalFigures,
    QueueFigures,
    RemoteFigures,
    SavedStateFigures,
)
from daemon.engine.scheduler import Scheduler
from models.loaded import LoadedModel

# The keys of /health's "engine" object, in the order it has always shown them.
LOCAL_KEYS = [
    "kind", "busy", "running", "parallel", "kv_slots", "steps", "batched_steps",
    "prompt_tokens_moved", "kv_prefixes_copied", "kv_slots_evicted", "jobs", "cancelled",
    "deadline", "errors", "tokens_generated", "prompt_tokens_evaluated", "prompt_tokens_reused",
    "last_job_tokens", "last_job_reason", "prompt_tokens_per_s", "tokens_per_s", "fork_cost",
    "candidates_decoded", "branches", "duplicate_branches", "late_branches",
]  # fmt: skip
REMOTE_KEYS = [
    "kind", "busy", "running", "parallel", "jobs", "cancelled", "deadline", "errors",
    "tokens_generated", "last_job_tokens", "last_job_reason", "prompt_tokens_per_s",
    "tokens_per_s", "backends",
]  # fmt: skip


def test_local_figures_are_the_engine_object_of_health():
    values: dict[str, Any] = {key: 0 for key in LOCAL_KEYS[1:]}
    values.update(last_job_reason="stop", fork_cost=None, candidates_decoded=True)
    shown = LocalFigures(**values).as_json()
    assert list(shown) == LOCAL_KEYS
    assert shown["kind"] == "local" and shown["last_job_reason"] == "stop"
    assert shown["fork_cost"] is None and shown["candidates_decoded"] is True


def test_queue_and_saved_state_figures_are_flat_workload_keys():
    queue = QueueFigures({"interactive": 2, "repair": 0, "background": 1}, 3, 4, 5)
    assert queue.as_json() == {
        "queued_interactive": 2,
        "queued_repair": 0,
        "queued_background": 1,
        "refused": 3,
        "preempted": 4,
        "yielded": 5,
    }
    assert list(queue.as_json())[:3] == ["queued_interactive", "queued_repair", "queued_background"]
    assert SavedStateFigures().as_json() == {
        "kv_states": 0,
        "kv_state_bytes": 0,
        "kv_restored": 0,
        "kv_tokens_restored": 0,
        "kv_disk_states": 0,
        "kv_disk_bytes": 0,
        "kv_disk_restored": 0,
        "kv_disk_tokens_restored": 0,
        "kv_disk_written": 0,
        "kv_disk_rejected": 0,
    }


@pytest.fixture
def remote() -> Any:
    # The engine reads only the prompt format's stop strings of the model until it runs a job.
    model = cast(LoadedModel, SimpleNamespace(facts=SimpleNamespace(stop_strings=["<|end|>"])))
    pool = BackendPool(["http://127.0.0.1:9", "http://127.0.0.1:10"], limit=2)
    engine = RemoteEngine(model, pool, Scheduler(4, 4), model_name="served")
    yield engine
    engine.close()


def test_a_remote_engine_reports_its_backends_its_queue_and_no_saved_states(remote):
    engine: ServingEngine = remote
    job = engine.submit([1, 2, 3], Budget(4, time.perf_counter() + 60), sink=lambda _: None)
    report = engine.report()
    assert isinstance(report.figures, RemoteFigures)
    shown = report.figures.as_json()
    assert list(shown) == REMOTE_KEYS
    assert shown["kind"] == "remote" and shown["parallel"] == 4
    assert [b["url"] for b in shown["backends"]] == ["http://127.0.0.1:9", "http://127.0.0.1:10"]
    assert all(b["state"] == "unknown" for b in shown["backends"])  # not checked yet
    assert report.queue.as_json()["queued_interactive"] == 1
    assert report.saved_states == SavedStateFigures()
    assert engine.kind == "remote" and engine.backends() == shown["backends"]
    engine.withdraw(job)
    assert engine.report().figures.cancelled == 1
    assert engine.report().queue.queued["interactive"] == 0
