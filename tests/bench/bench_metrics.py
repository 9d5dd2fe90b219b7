"""What recording a request's metrics costs a cache hit, measured in one run.

Two daemons on the same machine, one keeping metrics and one not (metrics=false), answer the
same cached completion in alternation; the medians of the client-side latency give the cost
of the record (the target: under 1% of a cache hit).
Run: .venv/bin/python tests/bench/bench_metrics.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from daemon.bench import _free_port
from daemon.client import DaemonClient
from daemon.launcher import spawn_daemon, wait_ready
from daemon.protocol import CompleteRequest, DoneEvent
from daemon.settings import Settings, load_settings

ROUNDS = 400
TEXT = 'import json\n\n\ndef load(path):\n    """Read a JSON file and return it as a dict."""\n    '


def start(
    settings: Settings, work: Path, name: str
) -> tuple[DaemonClient, subprocess.Popen[bytes]]:
    settings = settings.model_copy(
        update={
            "port": _free_port(),
            "cache_path": work / f"{name}.sqlite3",
            "metrics_path": work / f"{name}-metrics.sqlite3",
        }
    )
    process = spawn_daemon(settings, work / f"{name}.log")
    client = DaemonClient(settings.daemon_url)
    wait_ready(client, process, work / f"{name}.log", 180)
    return client, process


def hit(client: DaemonClient, request: CompleteRequest) -> float:
    start = time.perf_counter()
    done = [e for e in client.complete(request) if isinstance(e, DoneEvent)][-1]
    elapsed = (time.perf_counter() - start) * 1000
    assert done.cached, "not a cache hit"
    return elapsed


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="assist-bench-metrics-"))
    settings = load_settings()
    lines = TEXT.split("\n")
    request = CompleteRequest(
        text=TEXT,
        line=len(lines) - 1,
        column=len(lines[-1]),
        path="load.py",
        language="python",
        mode="fast",
    )
    with_metrics, first = start(settings.model_copy(update={"metrics": True}), work, "on")
    without, second = start(settings.model_copy(update={"metrics": False}), work, "off")
    on, off = [], []
    try:
        for client in (with_metrics, without):
            for _ in range(3):  # store the answer, warm the connection
                list(client.complete(request))
        for _ in range(ROUNDS):
            on.append(hit(with_metrics, request))
            off.append(hit(without, request))
    finally:
        for process in (first, second):
            process.terminate()
            process.wait(timeout=30)
    median_on, median_off = statistics.median(on), statistics.median(off)
    print(f"cache hit with and without metrics, median of {ROUNDS} alternating requests")
    print(f"  metrics off   {median_off:6.3f} ms")
    print(f"  metrics on    {median_on:6.3f} ms")
    print(
        f"  cost          {median_on - median_off:+6.3f} ms ({(median_on / median_off - 1):+.1%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
