"""A closed output pipe ends any `assist` command quietly (`assist ... | head -1`).

The real command runs in a subprocess whose stdout is a pipe that its reader closes: before the
command writes anything, or after reading its first line. None of these commands needs a
daemon: the port given is one nothing listens on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.cli.output import EXIT_BROKEN_PIPE
from daemon.client.launcher import free_port
from daemon.observe.metrics_file import connect
from daemon.store.result_cache import ResultCache
from daemon.tokens import write_users

ASSIST = [sys.executable, "-m", "daemon.cli"]
ROOT = Path(__file__).resolve().parents[2]


def assert_quiet(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert "BrokenPipeError" not in stderr and "Exception ignored" not in stderr, stderr


def run_with_closed_stdout(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``assist ARGS`` with a stdout nobody reads: every write to it meets EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*ASSIST, *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
    finally:
        os.close(write_end)


def first_line_then_close(args: list[str]) -> tuple[str, int, str]:
    """Read the first line of ``assist ARGS``, close the pipe, and let the command go on."""
    process = subprocess.Popen(
        [*ASSIST, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline().decode()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    return first, process.wait(timeout=120), stderr


@pytest.fixture
def tokens_file(tmp_path: Path) -> Path:
    """A tokens file whose `assist tokens list` (about 200 KB) is more than a pipe holds."""
    path = tmp_path / "tokens.toml"
    write_users(path, {f"user-{n:05d}": f"{n:064x}" for n in range(20_000)})
    return path


def test_a_reader_that_stops_after_one_line_ends_the_command_quietly(tokens_file):
    first, status, stderr = first_line_then_close(["tokens", "list", "--tokens", str(tokens_file)])
    assert first == "user-00000\n"
    assert status == EXIT_BROKEN_PIPE
    assert_quiet(stderr)
    assert stderr == ""


# argparse swallows the error of writing its own help and version (it exits 0, quietly).
ARGPARSE_OUTPUT = {0, EXIT_BROKEN_PIPE}


@pytest.mark.parametrize(
    ("args", "statuses"),
    [
        (["--help"], ARGPARSE_OUTPUT),
        (["--version"], ARGPARSE_OUTPUT),
        (["fix", "--help"], ARGPARSE_OUTPUT),
        (["tokens", "list", "--tokens", "{tokens}"], {EXIT_BROKEN_PIPE}),
        (
            ["stats", "--json", "--port", "{port}", "--metrics-path", "{metrics}"],
            {EXIT_BROKEN_PIPE},
        ),
        (["stats", "--port", "{port}", "--metrics-path", "{metrics}"], {EXIT_BROKEN_PIPE}),
        (["cache", "stats", "--port", "{port}", "--cache-path", "{cache}"], {EXIT_BROKEN_PIPE}),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_no_daemon_commands_end_quietly_when_nobody_reads(tmp_path, tokens_file, args, statuses):
    metrics = tmp_path / "metrics.sqlite3"
    connect(metrics).close()
    cache = tmp_path / "cache.sqlite3"
    ResultCache(cache).close()
    places = {"tokens": tokens_file, "port": free_port(), "metrics": metrics, "cache": cache}
    out = run_with_closed_stdout([arg.format(**places) for arg in args])
    assert out.returncode in statuses, out.stderr
    assert_quiet(out.stderr)
    assert out.stderr == ""


def test_errors_still_reach_stderr_when_stdout_is_closed(tmp_path):
    out = run_with_closed_stdout(["tokens", "list", "--tokens", str(tmp_path / "absent.toml")])
    assert out.returncode == 2
    assert "does not exist" in out.stderr
    assert_quiet(out.stderr)
