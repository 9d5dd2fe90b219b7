"""What the drop-in protocols cost a cache hit, against the daemon's own ``/v1/complete``.

One daemon, one cached completion (a Python line), then rounds in which the same document is
asked for through ``/v1/complete`` (NDJSON), ``/infill`` (llama.cpp server's, as llama.vim sends
it) and ``/v1/completions`` (OpenAI's, as the ``openai`` package sends it, with ``suffix``),
in turn, over one keep-alive connection each. Every answer must be a cache hit. It prints the
medians and p90 of the client-side latency and each protocol's ratio to ``/v1/complete``.
The target: within 1.5x.
Run: .venv/bin/python tests/bench/bench_dropin.py [--rounds 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from daemon.client.launcher import free_port, launch
from daemon.settings import load_settings

BEFORE = (
    'import json\n\n\ndef load(path):\n    """Read a JSON file."""\n    with open(path) as f:\n'
)
LINE = "        return json."
AFTER = "\n\n\nprint(load('x.json'))\n"


def complete(http: httpx.Client) -> bool:
    text = BEFORE + LINE + AFTER
    line = BEFORE.count("\n")
    body = {"text": text, "line": line, "column": len(LINE), "max_tokens": 48}
    with http.stream("POST", "/v1/complete", json=body) as response:
        events = [json.loads(x) for x in response.iter_lines() if x.strip()]
    return bool(events[-1].get("cached"))


def infill(http: httpx.Client) -> bool:
    body = {
        "input_prefix": BEFORE,
        "prompt": LINE,
        "input_suffix": AFTER,
        "n_predict": 48,
        "top_k": 40,
        "top_p": 0.99,
        "stream": False,
        "cache_prompt": True,
    }
    return bool(http.post("/infill", json=body).json()["cached"])


def completions(http: httpx.Client) -> bool:
    """(OpenAI's answer does not say it was cached: the cache's hit count is checked after.)"""
    body = {"model": "assist", "prompt": BEFORE + LINE, "suffix": AFTER, "max_tokens": 48}
    answer = http.post("/v1/completions", json=body).json()
    return bool(answer["choices"][0]["text"])


def session_hits(http: httpx.Client) -> int:
    return int(http.get("/v1/cache/stats").json()["session_hits"])


def timed(ask: Callable[[httpx.Client], bool], http: httpx.Client) -> float:
    started = time.perf_counter()
    ok = ask(http)
    elapsed = (time.perf_counter() - started) * 1000
    if not ok:
        raise SystemExit(f"{ask.__name__}: not a cache hit")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assist-bench-dropin-"))
    settings = load_settings(
        port=free_port(),
        cache_path=work / "cache.sqlite3",
        metrics_path=work / "metrics.sqlite3",
        rate_limit_per_minute=0,
    )
    process, _ = launch(settings, work / "daemon.log")
    asks = {"/v1/complete": complete, "/infill": infill, "/v1/completions": completions}
    times: dict[str, list[float]] = {name: [] for name in asks}
    try:
        clients = {name: httpx.Client(base_url=settings.daemon_url, timeout=300) for name in asks}
        complete(clients["/v1/complete"])  # the one model answer; everything after is a hit
        hits = session_hits(clients["/v1/complete"])
        for name, ask in asks.items():
            for _ in range(10):  # warm each endpoint's path and connection
                timed(ask, clients[name])
        for _ in range(args.rounds):
            for name, ask in asks.items():
                times[name].append(timed(ask, clients[name]))
        asked = len(asks) * (10 + args.rounds)
        if session_hits(clients["/v1/complete"]) - hits != asked:
            raise SystemExit("not every answer was a cache hit")
        for client in clients.values():
            client.close()
    finally:
        process.terminate()
        process.wait(timeout=60)
    base = statistics.median(times["/v1/complete"])
    print(f"bench_dropin: a cache hit through each protocol, {args.rounds} rounds in turn")
    for name, values in times.items():
        ordered = sorted(values)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        median = statistics.median(values)
        print(
            f"  {name:<17} median {median:6.2f} ms   p90 {p90:6.2f} ms   "
            f"{median / base:4.2f}x of /v1/complete"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
