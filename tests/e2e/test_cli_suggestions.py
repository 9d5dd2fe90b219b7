"""The commands the daemon's errors suggest, run as suggested: the errors are triggered for real.

The table of every suggestion and those that need no daemon are in
tests/unit/test_cli_suggestions.py; here are those of `assist serve` and those that start one.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from daemon.client.launcher import free_port
from tests.e2e.test_cli import assist, port_args
from tests.unit.test_cli_suggestions import (
    ASSIST,
    ROOT,
    assert_ran,
    run_suggestion,
    suggested_in_output,
)


@contextmanager
def serving(command: str, cwd: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run a suggested `assist serve ...` until it listens; yield what it printed; stop it."""
    words = shlex.split(command)
    assert words[:2] == ["assist", "serve"], command
    process = subprocess.Popen(
        [*ASSIST, *words[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    assert process.stdout is not None
    printed: list[str] = []
    timer = threading.Timer(180, process.kill)  # a daemon that never listens fails the test
    timer.start()
    try:
        for line in process.stdout:
            printed.append(line)
            if "listening" in line:
                break
        assert process.poll() is None, "".join(printed)
        yield "".join(printed)
    finally:
        timer.cancel()
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def own_state(tmp_path: Path) -> dict[str, str]:
    """A started daemon's cache and metrics in the test's folder, not the user's."""
    return {
        "ASSIST_CACHE_PATH": str(tmp_path / "cache.sqlite3"),
        "ASSIST_METRICS_PATH": str(tmp_path / "metrics.sqlite3"),
    }


def test_serve_off_loopback_without_tokens_suggests_commands_that_work(tmp_path):
    refused = assist("serve", "--host", "0.0.0.0", "--port", str(free_port()))
    assert refused.returncode == 1 and "refusing" in refused.stderr
    assert "--tokens tokens.toml" in refused.stderr.split("start with", 1)[1]
    [add] = suggested_in_output(refused.stderr)
    added = run_suggestion(add, tmp_path)
    assert_ran(added, {0})
    token = added.stdout.split()[-1]
    assert (tmp_path / "tokens.toml").exists()
    # "start with --tokens tokens.toml": on loopback here, so the test exposes nothing.
    port = str(free_port())
    env = own_state(tmp_path)
    with serving(f"assist serve --port {port} --tokens tokens.toml", tmp_path, env):
        allowed = run_suggestion(f"assist cache stats --port {port} --token {token}", tmp_path)
        assert_ran(allowed, {0})
        refused_without = run_suggestion(f"assist cache stats --port {port}", tmp_path)
        assert refused_without.returncode == 1


def test_serve_with_an_empty_or_missing_tokens_file_suggests_adding_a_user(tmp_path):
    empty = tmp_path / "empty.toml"
    empty.write_text("# nobody yet\n")
    for tokens in (empty, tmp_path / "absent.toml"):
        out = assist("serve", "--port", str(free_port()), "--tokens", str(tokens))
        assert out.returncode == 1, out.stderr
        [command] = suggested_in_output(out.stderr)
        assert_ran(run_suggestion(command, tmp_path), {0})
        with serving(
            f"assist serve --port {free_port()} --tokens {tokens}", tmp_path, own_state(tmp_path)
        ):
            pass


def test_a_port_in_use_suggests_doctor(daemon, tmp_path):
    out = assist("serve", *port_args(daemon))
    assert out.returncode == 1 and "already in use" in out.stderr
    [command] = suggested_in_output(out.stderr)
    assert command == f"assist doctor --port {daemon.settings.port}"
    # doctor exits 1 when any check fails; the daemon on that port is the one it finds.
    doctor = run_suggestion(command, tmp_path)
    assert_ran(doctor, {0, 1})
    assert f"pid {daemon.health.pid}" in doctor.stdout


def test_no_daemon_at_the_url_suggests_the_serve_that_starts_it_there(tmp_path):
    port = free_port()
    source = tmp_path / "app.py"
    source.write_text("def double(x):\n    return \n")
    url = f"http://127.0.0.1:{port}"
    position = ["--line", "2", "--column", "12"]
    missing = assist("complete", str(source), *position, "--url", url)
    assert missing.returncode == 1, missing.stderr
    [command] = suggested_in_output(missing.stderr)
    assert command == f"assist serve --port {port}"
    doctor = assist("doctor", "--url", url)
    assert f"`{command}` starts one" in doctor.stdout
    with serving(command, tmp_path, own_state(tmp_path)):
        answered = assist("complete", str(source), *position, "--url", url, "--max-tokens", "8")
        assert answered.returncode == 0, answered.stderr
