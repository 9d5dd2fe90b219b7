"""The benchmarks' daemon runner: a benchmark stopped with SIGTERM still runs its clean-up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.bench.quality.runs import stopped_on_sigterm

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys, time
from pathlib import Path
from tests.bench.quality.runs import stopped_on_sigterm
marker = Path(sys.argv[1])
with stopped_on_sigterm():
    try:
        marker.write_text("running")
        time.sleep(60)
    finally:
        marker.write_text("cleaned up")
"""


def _terminated(tmp_path: Path, script: str) -> tuple[int, str]:
    marker = tmp_path / "marker"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", script, str(marker)], env=env, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the script never started"
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
    finally:
        process.kill()
    return code, marker.read_text()


def test_sigterm_runs_the_finally_blocks(tmp_path):
    code, marker = _terminated(tmp_path, SCRIPT)
    assert marker == "cleaned up"
    assert code == 128 + signal.SIGTERM


def test_without_it_sigterm_skips_them(tmp_path):
    """The seam's reason: Python's default for SIGTERM ends the process at once."""
    bare = SCRIPT.replace("with stopped_on_sigterm():", "if True:")
    _, marker = _terminated(tmp_path, bare)
    assert marker == "running"


def test_the_previous_handler_comes_back():
    before = signal.getsignal(signal.SIGTERM)
    with stopped_on_sigterm():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


def test_off_the_main_thread_it_changes_nothing():
    seen = []

    def run():
        with stopped_on_sigterm():
            seen.append(signal.getsignal(signal.SIGTERM))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert seen == [signal.getsignal(signal.SIGTERM)]
