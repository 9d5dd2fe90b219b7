"""The `assist` command line against real daemons: complete, cache, doctor, serve errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.client.daemon_client import DaemonClient
from daemon.protocol import DoneEvent, StartEvent, parse_event
from tests.e2e.conftest import free_port
from tests.e2e.documents import LOAD_CONFIG, unique

ASSIST = [sys.executable, "-m", "daemon.cli"]


def assist(*args: str, env: dict[str, str] | None = None, timeout: float = 240):
    return subprocess.run(
        [*ASSIST, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nrequires-python = ">=3.11"\n'
        'dependencies = ["fastapi==0.115.0"]\n[tool.ruff]\nline-length = 88\n'
    )
    (tmp_path / "app.py").write_text(unique(LOAD_CONFIG))
    return tmp_path


def port_args(daemon) -> list[str]:
    return ["--port", str(daemon.settings.port)]


def test_complete_prints_the_completion_then_answers_from_the_cache(daemon, project):
    line = str(len((project / "app.py").read_text().split("\n")))
    first = assist(
        "complete", str(project / "app.py"), "--line", line, "--column", "5", *port_args(daemon)
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip()
    assert "tokens" in first.stderr and "[cache" not in first.stderr
    second = assist(
        "complete", str(project / "app.py"), "--line", line, "--column", "5", *port_args(daemon)
    )
    assert second.returncode == 0
    assert second.stdout == first.stdout
    assert "[cache" in second.stderr


def test_complete_json_prints_ndjson_events_with_the_profile_applied(daemon, project):
    line = str(len((project / "app.py").read_text().split("\n")))
    out = assist(
        "complete",
        str(project / "app.py"),
        "--line",
        line,
        "--column",
        "5",
        "--json",
        "--no-cache",
        *port_args(daemon),
    )
    assert out.returncode == 0, out.stderr
    events = [parse_event(text) for text in out.stdout.splitlines()]
    assert isinstance(events[0], StartEvent) and events[0].language == "python"
    assert isinstance(events[-1], DoneEvent) and events[-1].cached is False
    # The profile header reached the model: the prompt is longer than the file alone.
    assert events[0].prompt_tokens > 60


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (b"\x00\x01\x02binary", ["--line", "1", "--column", "1"], "binary"),
        (b"x = '\xff'\n", ["--line", "1", "--column", "1"], "UTF-8"),
        (b"x = 1\n", ["--line", "9", "--column", "1"], "--line 9"),
        (b"x = 1\n", ["--line", "1", "--column", "40"], "--column 40"),
    ],
)
def test_bad_input_exits_2_with_a_message(daemon, tmp_path, content, args, message):
    path = tmp_path / "input.py"
    path.write_bytes(content)
    out = assist("complete", str(path), *args, *port_args(daemon))
    assert out.returncode == 2
    assert message in out.stderr


def test_missing_file_exits_2(daemon, tmp_path):
    out = assist(
        "complete", str(tmp_path / "nope.py"), "--line", "1", "--column", "1", *port_args(daemon)
    )
    assert out.returncode == 2 and "does not exist" in out.stderr


def test_cache_stats_and_doctor(daemon):
    stats = assist("cache", "stats", *port_args(daemon))
    assert stats.returncode == 0, stats.stderr
    assert "entries" in stats.stdout and str(daemon.settings.resolved_cache_path) in stats.stdout
    doctor = assist("doctor", *port_args(daemon))
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "Qwen2.5 Coder 0.5B Instruct AWQ" in doctor.stdout
    model_name = next(line for line in doctor.stdout.splitlines() if "model name" in line)
    assert model_name.split()[0] == "ok"
    assert "qwen2.5-coder-0.5b (default)" in model_name and "installed" in model_name
    assert "FAIL" not in doctor.stdout
    assert f"pid {daemon.health.pid}" in doctor.stdout


def test_cache_clear_without_a_daemon_works_on_the_file(tmp_path):
    from daemon.store.result_cache import CachedResult, ResultCache

    path = tmp_path / "c.sqlite3"
    cache = ResultCache(path)
    cache.put("k", CachedResult(text="x", finish_reason="stop", tokens=1))
    cache.close()
    out = assist("cache", "clear", "--port", str(free_port()), "--cache-path", str(path))
    assert out.returncode == 0, out.stderr
    assert "removed 1" in out.stdout


def test_serve_refuses_a_missing_model_with_how_to_get_one(tmp_path):
    out = assist("serve", "--port", str(free_port()), "--model-path", str(tmp_path / "no.gguf"))
    assert out.returncode == 1
    assert "does not exist" in out.stderr and "pip install" in out.stderr


def test_serve_refuses_a_corrupt_model(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + os.urandom(4096))
    out = assist("serve", "--port", str(free_port()), "--model-path", str(bad))
    assert out.returncode == 1
    assert "cannot be used" in out.stderr or "could not load" in out.stderr


def test_serve_refuses_non_loopback_without_tokens():
    out = assist("serve", "--host", "0.0.0.0", "--port", str(free_port()))
    assert out.returncode == 1 and "refusing" in out.stderr


def test_serve_reports_a_port_in_use(daemon):
    out = assist("serve", *port_args(daemon))
    assert out.returncode == 1 and "already in use" in out.stderr


def test_complete_starts_one_daemon_for_two_clients(project, tmp_path):
    port = str(free_port())
    cache_dir = tmp_path / "state"
    env = {
        "ASSIST_CACHE_DIR": str(cache_dir),
        "ASSIST_PORT": port,
        "ASSIST_CACHE_PATH": str(tmp_path / "cache.sqlite3"),
        "ASSIST_FAST_MAX_TOKENS": "8",
    }
    line = str(len((project / "app.py").read_text().split("\n")))
    command = [*ASSIST, "complete", str(project / "app.py"), "--line", line, "--column", "5"]
    clients = [
        subprocess.Popen(
            command,
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        results = [c.communicate(timeout=240) for c in clients]
        assert [c.returncode for c in clients] == [0, 0], results
        assert all(stdout.strip() for stdout, _ in results)
        log = (cache_dir / f"daemon-{port}.log").read_text()
        assert log.count("assist daemon listening") == 1
    finally:
        with DaemonClient(f"http://127.0.0.1:{port}") as client:
            health = client.try_health()
        if health is not None:
            os.kill(health.pid, 15)


def test_bench_prints_its_figures():
    out = assist("bench", "--repeat", "1", "--completion-tokens", "48", "--json", timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    figures = json.loads(out.stdout)
    assert figures["tokens"] >= 1 and figures["hit_ms"] > 0
    assert figures["hit_speedup"] > 1 and figures["overhead_ratio"] > 0
