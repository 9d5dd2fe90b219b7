"""What TLS adds to a cache hit on loopback: two daemons on the embedded model, one serving
HTTPS with a certificate made here (trustme, a private CA the client verifies it with), the
other plain HTTP.

Each daemon is warmed with one completion; then rounds in which the same completion is asked of
each in turn (which one goes first alternates), as the clients ask it: httpx with the client
library's transport (TCP_NODELAY, the CA of ``tls_verify``). Every answer must be a cache hit.
It prints the medians and p90 of the client-side latency and the ratio HTTPS / HTTP, over one
keep-alive connection each (the language server's case: the target is 1.2x at most), then with
a new connection per request (a CLI command's case: the TLS handshake counts).
Run: .venv/bin/python tests/bench/bench_tls.py [--rounds 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from daemon.client.daemon_client import NO_DELAY, tls_verify
from daemon.client.launcher import free_port, launch
from daemon.settings import Settings, load_settings
from tests.unit.certificates import Certificates, make_certificates

TEXT = 'import json\n\n\ndef load(path):\n    """Read a JSON file."""\n    with open(path) as f:\n'
LINE = "        return json."
BODY = {"text": TEXT + LINE + "\n", "line": TEXT.count("\n"), "column": len(LINE), "path": "x.py"}
TARGET = 1.2


def client(settings: Settings, keep_alive: bool) -> httpx.Client:
    limits = httpx.Limits(max_keepalive_connections=None if keep_alive else 0)
    verify = tls_verify(settings.daemon_url, settings.ca)
    return httpx.Client(
        base_url=settings.daemon_url,
        timeout=120,
        trust_env=False,
        transport=httpx.HTTPTransport(verify=verify, socket_options=NO_DELAY, limits=limits),
    )


def hit(http: httpx.Client) -> float:
    """One completion, in milliseconds; it must come from the cache."""
    start = time.perf_counter()
    with http.stream("POST", "/v1/complete", json=BODY) as response:
        events = [json.loads(line) for line in response.iter_lines() if line.strip()]
    elapsed = (time.perf_counter() - start) * 1000
    assert events[-1].get("cached"), f"not a cache hit: {events[-1]}"
    return elapsed


def alternate(
    plain: httpx.Client, secure: httpx.Client, rounds: int
) -> tuple[list[float], list[float]]:
    times: tuple[list[float], list[float]] = ([], [])
    for n in range(rounds):
        order = ((0, plain), (1, secure)) if n % 2 == 0 else ((1, secure), (0, plain))
        for index, http in order:
            times[index].append(hit(http))
    return times


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def report(title: str, plain: list[float], secure: list[float]) -> float:
    ratio = statistics.median(secure) / statistics.median(plain)
    print(title)
    print(f"  http    median {statistics.median(plain):7.2f} ms   p90 {p90(plain):7.2f} ms")
    print(f"  https   median {statistics.median(secure):7.2f} ms   p90 {p90(secure):7.2f} ms")
    print(f"  ratio   {ratio:.3f}x (https / http, medians)")
    return ratio


def start(work: Path, name: str, **tls: object) -> tuple[Settings, subprocess.Popen[bytes]]:
    folder = work / name
    folder.mkdir()
    settings = load_settings(
        port=free_port(),
        cache_path=folder / "cache.sqlite3",
        metrics_path=folder / "metrics.sqlite3",
        rate_limit_per_minute=0,  # hundreds of hits a minute from one user
        **tls,
    )
    process, _ = launch(settings, folder / "daemon.log")
    return settings, process


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="hits asked of each daemon")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assist-bench-tls-"))
    certs: Certificates = make_certificates(work / "pki")
    plain_settings, plain_process = start(work, "plain")
    tls = {"tls_cert": certs.cert, "tls_key": certs.key, "ca": certs.ca}
    secure_settings, secure_process = start(work, "secure", **tls)
    try:
        with client(plain_settings, True) as plain, client(secure_settings, True) as secure:
            for http in (plain, secure):  # warm: the answer, then the connection
                with http.stream("POST", "/v1/complete", json=BODY) as response:
                    response.read()
            alternate(plain, secure, 10)
            kept = alternate(plain, secure, args.rounds)
        with client(plain_settings, False) as plain, client(secure_settings, False) as secure:
            fresh = alternate(plain, secure, max(args.rounds // 3, 20))
    finally:
        for process in (plain_process, secure_process):
            process.terminate()
            process.wait(timeout=30)
    print(f"cache hits on loopback, {args.rounds} rounds, the two daemons asked in turn")
    ratio = report("one keep-alive connection each (the language server)", *kept)
    report("a new connection per request (a CLI command; the handshake counts)", *fresh)
    verdict = "met" if ratio <= TARGET else "missed"
    print(f"target: https / http <= {TARGET}x over kept-alive connections: {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
