"""A shared workstation's figures, measured in one run:

1. interactive completion latency (p50, p99) while long repairs keep the model busy, against
   the same completions on an idle daemon (repairs yield to completions before their next
   token, so the ratio says what a user feels while a teammate runs a big repair);
2. time to first token when switching back to a recently used file after as many others as
   the KV cache keeps, with saved KV states against without them (kv_states_bytes=0), and
   against a cold prompt.
Run: .venv/bin/python tests/bench/bench_workstation.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.protocol import CompleteRequest, DoneEvent, FixRequest
from daemon.settings import Settings, load_settings

DATA = Path(__file__).resolve().parent.parent / "data"
ROUNDS = 20
FUNCTION = '''

def handler_{n}(request: dict) -> dict:
    """Validate request {n} and build its response."""
    if "id" not in request:
        raise KeyError("id")
    return {{"id": request["id"], "handled_by": {n}}}
'''


def start(settings: Settings, work: Path) -> tuple[Settings, subprocess.Popen[bytes]]:
    settings = settings.model_copy(
        update={"port": free_port(), "cache_path": work / f"cache-{uuid.uuid4().hex[:6]}.sqlite3"}
    )
    process, _ = launch(settings, work / "daemon.log")
    return settings, process


def completion(text: str) -> CompleteRequest:
    lines = text.split("\n")
    return CompleteRequest(
        text=text,
        line=len(lines) - 1,
        column=len(lines[-1]),
        path=f"{uuid.uuid4().hex[:8]}.py",
        language="python",
        cache=False,
        mode="fast",
        max_tokens=16,
    )


def timed(client: DaemonClient, request: CompleteRequest) -> DoneEvent:
    done = [e for e in client.complete(request) if isinstance(e, DoneEvent)]
    assert done, "no answer"
    return done[-1]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def interactive_latencies(url: str) -> list[float]:
    times = []
    with DaemonClient(url) as client:
        for i in range(ROUNDS):
            head = f"# round {uuid.uuid4().hex}\nimport os\n\n\n"
            text = head + f"def path_{i}(name):\n    return os.path."
            start = time.perf_counter()
            timed(client, completion(text))
            times.append((time.perf_counter() - start) * 1000)
    return times


def keep_repairing(url: str, stop: threading.Event) -> int:
    """Repairs back to back, each long (model candidates, no parser hints), until told."""
    broken = (DATA / "broken" / "go" / "missing_brace_if.go").read_text()
    done = 0
    with DaemonClient(url) as client:
        while not stop.is_set():
            request = FixRequest(
                text=f"// {uuid.uuid4().hex}\n{broken}", path="busy.go", cache=False
            )
            for _ in client.fix(request):
                pass
            done += 1
    return done


def measure_contention(settings: Settings, work: Path) -> None:
    busy_settings = settings.model_copy(
        update={"fix_parser_hints": False, "fix_candidates": 8, "fix_max_tokens": 160}
    )
    config, process = start(busy_settings, work)
    try:
        idle = interactive_latencies(config.daemon_url)
        stop = threading.Event()
        repairs: list[int] = []
        worker = threading.Thread(
            target=lambda: repairs.append(keep_repairing(config.daemon_url, stop))
        )
        worker.start()
        time.sleep(2.0)  # the first repair is generating
        busy = interactive_latencies(config.daemon_url)
        stop.set()
        worker.join()
        with DaemonClient(config.daemon_url) as client:
            workload = client.health().workload
    finally:
        process.terminate()
        process.wait(timeout=30)
    p50_idle, p99_idle = percentile(idle, 0.5), percentile(idle, 0.99)
    p50_busy, p99_busy = percentile(busy, 0.5), percentile(busy, 0.99)
    print(f"interactive completions ({ROUNDS} each, 16 tokens), idle vs during repairs")
    print(f"  idle         p50 {p50_idle:7.0f} ms   p99 {p99_idle:7.0f} ms")
    print(f"  repairing    p50 {p50_busy:7.0f} ms   p99 {p99_busy:7.0f} ms")
    print(f"  ratio        p50 {p50_busy / p50_idle:7.2f}x    p99 {p99_busy / p99_idle:7.2f}x")
    print(f"  repairs run alongside: {sum(repairs)}, jobs yielded: {workload.get('preempted')}")


def ttft(client: DaemonClient, text: str) -> float:
    request = completion(text).model_copy(update={"path": "switch.py"})
    done = timed(client, request)
    assert done.timings.first_token_ms is not None
    return done.timings.first_token_ms


def measure_switching(settings: Settings, work: Path) -> None:
    results = {}
    for name, kv_bytes in (("saved states", 512 * 1024 * 1024), ("no saved states", 0)):
        config, process = start(settings.model_copy(update={"kv_states_bytes": kv_bytes}), work)
        cold, back = [], []
        try:
            with DaemonClient(config.daemon_url) as client:
                for _ in range(5):
                    a = f"# {uuid.uuid4().hex}\nimport json\n" + "".join(
                        FUNCTION.format(n=n) for n in range(14)
                    )
                    cold.append(ttft(client, a + "\n\ndef last(request):\n    "))
                    # As many other files in between as the KV cache keeps documents, so the
                    # first one's sequence goes to another (short files: quick to read).
                    for k in range(config.kv_slots):
                        b = f"# {uuid.uuid4().hex}\nimport os\n\n\ndef other_{k}(request):\n    "
                        ttft(client, b)
                    back.append(ttft(client, a + "\n\ndef last(request):\n    x = 1\n    "))
        finally:
            process.terminate()
            process.wait(timeout=30)
        results[name] = (statistics.median(cold), statistics.median(back))
    print("switching back to a recently used file (time to first token, median of 5)")
    for name, (cold_ms, back_ms) in results.items():
        ratio = cold_ms / back_ms
        print(f"  {name:<16} cold {cold_ms:7.0f} ms   back {back_ms:7.0f} ms   {ratio:5.1f}x")
    with_states = results["saved states"][1]
    without = results["no saved states"][1]
    print(f"  switch back, without / with saved states: {without / with_states:.1f}x")


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="assist-bench-team-"))
    settings = load_settings(fast_deadline_ms=60000, deep_deadline_ms=60000, fix_deadline_ms=60000)
    measure_switching(settings, work)
    measure_contention(settings, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
