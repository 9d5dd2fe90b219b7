"""What recording a request's metrics costs a cache hit, measured in one run.

1. Two daemons on the same machine, one keeping metrics and one not (metrics=false), answer
   the same cached completion in alternation: the medians of the client-side latency.
2. The recording itself, timed in this process on the events of a real cache hit: the work on
   the request's path (building the record from its events, queueing it), and that plus the
   recorder thread's work (SQLite, Prometheus), per request, against the cache hit's latency.
The target: under 1% of a cache hit.
Run: .venv/bin/python tests/bench/bench_metrics.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.protocol import CompleteRequest, DoneEvent
from daemon.settings import Settings, load_settings

ROUNDS = 400
TEXT = 'import json\n\n\ndef load(path):\n    """Read a JSON file and return it as a dict."""\n    '


def start(
    settings: Settings, work: Path, name: str
) -> tuple[DaemonClient, subprocess.Popen[bytes]]:
    settings = settings.model_copy(
        update={
            "port": free_port(),
            "cache_path": work / f"{name}.sqlite3",
            "metrics_path": work / f"{name}-metrics.sqlite3",
        }
    )
    process, _ = launch(settings, work / f"{name}.log")
    return DaemonClient(settings.daemon_url), process


def hit(client: DaemonClient, request: CompleteRequest) -> float:
    start = time.perf_counter()
    done = [e for e in client.complete(request) if isinstance(e, DoneEvent)][-1]
    elapsed = (time.perf_counter() - start) * 1000
    assert done.cached, "not a cache hit"
    return elapsed


def record_cost(work: Path, request: CompleteRequest) -> tuple[float, float]:
    """Microseconds per request: on the request's path, and with the recorder's thread's
    work (SQLite, Prometheus) included, in CPU time."""
    from daemon.http.ndjson import observe
    from daemon.observe.metrics import MetricsRecorder, RequestRecord

    settings = load_settings(rate_limit_per_minute=0, metrics=False)
    client, process = start(settings, work, "events")
    try:
        for _ in range(2):
            events = list(client.complete(request))
    finally:
        process.terminate()
        process.wait(timeout=30)
    recorder = MetricsRecorder(work / "cost.sqlite3")
    count = 20_000
    try:
        start_time, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(count):
            record = RequestRecord("complete", request.language, request.path, "local", "cancelled")
            for event in events:
                observe(record, event)
            recorder.record(record)
        hot = time.perf_counter() - start_time
        recorder.flush(timeout=120)
        # CPU time of both threads: the gathering pauses of the recorder cost no CPU.
        cpu = time.process_time() - start_cpu
    finally:
        recorder.close()
    return hot / count * 1e6, cpu / count * 1e6


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="assist-bench-metrics-"))
    settings = load_settings(rate_limit_per_minute=0)
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
    hot_us, all_us = record_cost(work, request)
    print(f"cache hit with and without metrics, median of {ROUNDS} alternating requests")
    print(f"  metrics off   {median_off:6.3f} ms")
    print(f"  metrics on    {median_on:6.3f} ms")
    print(
        f"  cost          {median_on - median_off:+6.3f} ms ({(median_on / median_off - 1):+.1%})"
    )
    print("recording one request, timed in process")
    print(f"  request path  {hot_us:6.1f} us ({hot_us / 1000 / median_off:.2%} of a cache hit)")
    print(f"  with thread   {all_us:6.1f} us ({all_us / 1000 / median_off:.2%} of a cache hit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
