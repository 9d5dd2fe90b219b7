"""Remote backends: what assist in front costs a miss, and a killed backend under load.

Real servers: ``python -m llama_cpp.server`` processes on loopback ports with the embedded
Gemma 3 270M, one thread each; one daemon started with ``--backend`` for each of them.

latency    One backend. Distinct documents are completed through the daemon (``/v1/complete``,
           cache off, the fast path); the daemon's debug log holds the exact body it sent for
           each. Each body is then sent to the backend directly, streamed, and read to the same
           number of tokens the daemon's answer had. Before every timed request an unrelated
           prompt is sent, so that neither side finds its prompt in the server's KV cache. It
           prints the medians and their ratio (the target: within 1.10x).
failover   Three backends, ``--clients`` threads each sending completions one after another
           (fast and deep, and repairs) for a fixed time; one backend is killed with
           ``kill -9`` a third of the way in and restarted two thirds of the way in. It prints
           requests that hung (no answer within 120 s), 5xx answers, streams that ended in
           ``error``, throughput per phase, and the seconds from the revived server answering
           its health check to its first request.
Run: .venv/bin/python tests/bench/bench_remote.py [--documents 16] [--seconds 90] [--clients 6]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from daemon.client.launcher import free_port, launch
from daemon.settings import load_settings
from tests.e2e.llama_servers import MODEL, LlamaServer, start_servers

TEMPLATE = '''import json
from pathlib import Path

# {name}: settings of the {name} service, read once at start-up.


def load_{name}(path: Path) -> dict:
    """Read the {name} settings file and return it as a dict."""
    with path.open() as handle:
        data = json.load(handle)
    if "{name}" not in data:
        raise KeyError("{name}")
    return data["{name}"]


def {name}_port(settings: dict) -> int:
    return int(settings.get("port", 8080))


def {name}_host(settings: dict) -> str:
    '''
NAMES = [
    "billing",
    "catalog",
    "checkout",
    "delivery",
    "email",
    "frontend",
    "gateway",
    "history",
    "inventory",
    "journal",
    "ledger",
    "metrics",
    "notify",
    "orders",
    "payments",
    "queue",
    "ratings",
    "search",
    "shipping",
    "tickets",
    "uploads",
    "vouchers",
    "webhooks",
    "zones",
]


ERRORS: list[str] = []


def daemon(work: Path, servers: list[LlamaServer], **extra: Any):
    settings = load_settings(
        port=free_port(),
        model=MODEL,
        backend=[s.url for s in servers],
        backend_limit=1,
        backend_check_s=0.5,
        cache_path=work / "cache.sqlite3",
        metrics_path=work / "metrics.sqlite3",
        rate_limit_per_minute=0,
        queue_size=64,
        user_queue_size=64,
        **{"log_level": "debug", **extra},
    )
    log = work / f"daemon-{settings.port}.log"
    process, _ = launch(settings, log)
    return settings, process, log


def body(name: str, mode: str = "fast") -> dict[str, Any]:
    text = TEMPLATE.format(name=name)
    lines = text.split("\n")
    return {
        "text": text,
        "line": len(lines) - 1,
        "column": len(lines[-1]),
        "path": f"{name}.py",
        "cache": False,
        "mode": mode,
    }


def through(url: str, request: dict[str, Any], path: str = "/v1/complete") -> tuple[int, str, int]:
    """Status, the last event's kind and the answer's tokens, read to the end of the stream
    (an error event's message goes to ``ERRORS``)."""
    with (
        httpx.Client(base_url=url, timeout=120, trust_env=False) as http,
        http.stream("POST", path, json=request) as response,
    ):
        if response.status_code != 200:
            response.read()
            return response.status_code, "refused", 0
        last: dict[str, Any] = {}
        for line in response.iter_lines():
            if line.strip():
                last = json.loads(line)
        if last.get("event") == "error":
            ERRORS.append(str(last.get("message")))
        return 200, str(last.get("event")), int(last.get("tokens") or 0)


def direct(server: LlamaServer, sent: dict[str, Any], tokens: int) -> float:
    """Seconds to read ``tokens`` chunks of the backend's own stream for the same body."""
    began = time.perf_counter()
    with (
        httpx.Client(timeout=120, trust_env=False) as http,
        http.stream("POST", f"{server.url}/v1/completions", json={**sent, "stream": True}) as r,
    ):
        seen = 0
        for line in r.iter_lines():
            if not line.startswith("data:") or line.strip() == "data: [DONE]":
                continue
            if json.loads(line[5:])["choices"][0]["text"]:
                seen += 1
            if seen >= tokens:
                break
    return time.perf_counter() - began


def flush(server: LlamaServer) -> None:
    server.complete("A different prompt altogether, so the next one starts cold.", 1)


def sent_bodies(log: Path) -> list[dict[str, Any]]:
    marker = "daemon.engine.remote.engine: to "
    found = []
    for line in log.read_text().splitlines():
        if marker in line:
            found.append(json.loads(line.split(marker, 1)[1].split(": ", 1)[1]))
    return found


def latency(work: Path, documents: int) -> None:
    (server,) = start_servers(1, work)
    settings, process, log = daemon(work, [server])
    assist_s: list[float] = []
    answers: list[int] = []
    try:
        for name in NAMES[:documents]:
            flush(server)
            began = time.perf_counter()
            status, kind, tokens = through(settings.daemon_url, body(name))
            assist_s.append(time.perf_counter() - began)
            if (status, kind) != (200, "done"):
                raise SystemExit(f"{name}: {status} {kind}")
            answers.append(tokens)
    finally:
        process.terminate()
        process.wait(timeout=60)
    sent = sent_bodies(log)
    if len(sent) != documents:
        raise SystemExit(f"{len(sent)} bodies in the daemon's log for {documents} requests")
    direct_s = []
    for request, tokens in zip(sent, answers, strict=True):
        flush(server)
        direct_s.append(direct(server, request, max(1, tokens)))
    server.kill()
    a, d = statistics.median(assist_s) * 1000, statistics.median(direct_s) * 1000
    print(f"latency: {documents} misses, one backend (median tokens {statistics.median(answers)})")
    print(f"  through assist  median {a:7.1f} ms")
    print(f"  backend alone   median {d:7.1f} ms")
    print(f"  ratio           {a / d:5.2f}x (target <= 1.10x)")


class Load:
    """Closed-loop clients sending a mix of requests until told to stop."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.stop = threading.Event()
        self.results: list[tuple[float, int, str]] = []  # (finished at, status, last event)
        self.hung = 0
        self._lock = threading.Lock()
        self._count = 0

    def client(self, index: int) -> None:
        while not self.stop.is_set():
            with self._lock:
                self._count += 1
                n = self._count
            name = f"{NAMES[n % len(NAMES)]}{n}"
            try:
                if n % 5 == 4:
                    broken = (
                        f"import os\n\n\ndef {name}(root):\n    return sorted(os.listdir(root)\n"
                    )
                    status, kind, _ = through(self.url, {"text": broken, "path": "b.py"}, "/v1/fix")
                else:
                    status, kind, _ = through(
                        self.url, body(name, "deep" if n % 5 == 3 else "fast")
                    )
            except httpx.TimeoutException:
                with self._lock:
                    self.hung += 1
                continue
            with self._lock:
                self.results.append((time.monotonic(), status, kind))


def backends(url: str) -> dict[str, dict[str, Any]]:
    engine = httpx.get(f"{url}/health", timeout=30, trust_env=False).json()["engine"]
    return {b["url"]: b for b in engine["backends"]}


def failover(work: Path, seconds: float, clients: int) -> None:
    servers = start_servers(3, work)
    settings, process, _ = daemon(work, servers, log_level="info")
    url = settings.daemon_url
    load = Load(url)
    began = time.monotonic()
    kill_at, revive_at = began + seconds / 3, began + 2 * seconds / 3
    victim = servers[0]
    answered_at = first_use_at = None
    try:
        with ThreadPoolExecutor(clients) as pool:
            for i in range(clients):
                pool.submit(load.client, i)
            time.sleep(max(0.0, kill_at - time.monotonic()))
            victim.kill()
            time.sleep(max(0.0, revive_at - time.monotonic()))
            before = backends(url)[victim.url]["requests"]
            victim.start()
            answered_at = time.monotonic()
            while time.monotonic() < began + seconds:
                if first_use_at is None and backends(url)[victim.url]["requests"] > before:
                    first_use_at = time.monotonic()
                time.sleep(0.1)
            load.stop.set()
        final = backends(url)
    finally:
        process.terminate()
        process.wait(timeout=60)
        for server in servers:
            server.kill()

    def phase(start: float, end: float) -> str:
        done = [r for r in load.results if start <= r[0] < end and r[2] == "done"]
        return f"{len(done) / (end - start):5.2f} answers/s"

    end = began + seconds
    print(f"failover: 3 backends, {clients} clients for {seconds:.0f} s, one killed and revived")
    print(f"  requests        {len(load.results)} answered, {load.hung} hung")
    statuses = [r[1] for r in load.results]
    kinds = [r[2] for r in load.results]
    print(f"  5xx             {sum(s >= 500 for s in statuses)}; 429: {statuses.count(429)}")
    print(f"  streams         {kinds.count('done')} done, {kinds.count('error')} error")
    for message in sorted(set(ERRORS)):
        print(f"    error: {message}")
    print(
        f"  throughput      before the kill {phase(began, kill_at)}; with two backends "
        f"{phase(kill_at, revive_at)}; after the revival {phase(revive_at, end)}"
    )
    if first_use_at is not None and answered_at is not None:
        print(
            f"  revived server  took its first request "
            f"{first_use_at - answered_at:4.1f} s after it answered"
        )
    else:
        print("  revived server  took no request before the end")
    for backend_url, b in final.items():
        print(
            f"  {backend_url}  {b['requests']} requests, {b['errors']} errors, "
            f"{b['failovers']} failed over, came back {b['came_back']}x"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--only", choices=("latency", "failover"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assist-bench-remote-"))
    if args.only in (None, "latency"):
        latency(work, min(args.documents, len(NAMES)))
    if args.only in (None, "failover"):
        failover(work, args.seconds, args.clients)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
