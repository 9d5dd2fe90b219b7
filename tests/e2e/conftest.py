"""End-to-end fixtures: a real daemon on a loopback port, the real embedded model, real SQLite.

One daemon serves the whole session (loading a model per test would make the suite slow); tests
that need a daemon of their own start one with ``start_daemon``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.protocol import Health
from daemon.settings import Settings, load_settings
from daemon.tokens import add_user
from models.loaded import LoadedModel
from models.resolve import resolve_model


@dataclass
class RunningDaemon:
    settings: Settings
    process: subprocess.Popen[bytes]
    health: Health
    log: Path

    @property
    def url(self) -> str:
        return self.settings.daemon_url

    def client(self) -> DaemonClient:
        return DaemonClient(self.url)

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, trust_env=False)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_daemon(work: Path, **overrides: object) -> RunningDaemon:
    values: dict[str, object] = {
        "port": free_port(),
        "cache_path": work / "cache.sqlite3",
        "metrics_path": work / "metrics.sqlite3",
        "fast_max_tokens": 24,
        "deep_max_tokens": 48,
        # Tests assert what happens, not how fast: deadlines that a loaded machine still meets.
        "fast_deadline_ms": 30000,
        "deep_deadline_ms": 60000,
        "deep_target_ms": 60000,
        "fix_deadline_ms": 60000,
        "queue_size": 4,
        # Tests assert what the model wrote: the confidence gate has tests of its own.
        "min_confidence": 0.0,
        # Candidates on any machine, so that the tests see them (on two CPU cores the daemon
        # measures that they cost too much and leaves them out).
        "candidates_cost_limit": 0.0,
    }
    values.update(overrides)
    settings = load_settings(**values)
    log = work / f"daemon-{settings.port}.log"
    process, health = launch(settings, log)
    return RunningDaemon(settings, process, health, log)


def start_guarded(work: Path, **overrides: object) -> tuple[RunningDaemon, str]:
    """A daemon with tokens (one user), one job at a time and room for one waiting request, and
    no rate limit: a few requests at once overload it. Returns it and the user's token."""
    tokens = work / "tokens.toml"
    token = add_user(tokens, "alice")
    values: dict[str, object] = {
        "tokens": tokens,
        "token": token,
        "queue_size": 1,
        "user_queue_size": 1,
        "parallel": 1,
        "rate_limit_per_minute": 0,
    }
    values.update(overrides)
    return start_daemon(work, **values), token


@pytest.fixture(scope="session")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    running = start_daemon(tmp_path_factory.mktemp("daemon"))
    yield running
    running.stop()


def _engine_model(sequences: int, unified: bool) -> LoadedModel:
    settings = load_settings()
    return LoadedModel(
        resolve_model(None, settings.cache_dir, settings.model),
        n_ctx=2048,
        n_batch=512,
        n_threads=None,
        n_gpu_layers=-1,
        prompt_format=None,
        fingerprint_memo=settings.cache_dir / "fingerprints.json",
        sequences=sequences,
        kv_cells=8192,
        unified=unified,
    )


@pytest.fixture(scope="session")
def engine_model() -> Iterator[LoadedModel]:
    """The embedded model in this process, for the engine's own tests, as the daemon loads it
    by default: four slots and a spare sequence, each in a KV stream of its own of 2,048
    cells."""
    loaded = _engine_model(5, unified=False)
    yield loaded
    loaded.close()


@pytest.fixture(scope="session")
def unified_model() -> Iterator[LoadedModel]:
    """The embedded model as the daemon loads it for reuse after an edit: five sequences (four
    slots and a scratch one) sharing one KV cache of 8,192 cells."""
    loaded = _engine_model(5, unified=True)
    yield loaded
    loaded.close()
