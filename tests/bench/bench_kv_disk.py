"""Time to first token in a document seen before a restart, with the KV states kept on disk.

A real file of about 1,900 tokens from Python's standard library (shelve.py), a completion at
its end: the first request on a fresh daemon (the document evaluated cold), then the daemon
stopped cleanly and started again on the same cache folder, and the same request (the result
cache bypassed: the engine answers). Prints both times to first token and their ratio, and the
time until the prompt was in the KV cache (the first token also waits for the fast path's first
line to be written); the second should restore the document's KV from disk instead of
evaluating it.
Each round uses a fresh folder and a document of its own.
Run: .venv/bin/python tests/bench/bench_kv_disk.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.protocol import DoneEvent
from daemon.settings import Settings, load_settings
from tests.bench.bench_workstation import completion

SOURCE = Path(sysconfig.get_paths()["stdlib"]) / "shelve.py"
# Where the completion is asked for: a new function at the end of the file.
CURSOR = "\n\ndef open_readonly(filename):\n    "


@dataclass
class Answered:
    first_token_ms: float
    prompt_ms: float  # until the prompt is in the KV cache (evaluated, or restored)
    prompt_tokens: int
    workload: dict[str, object]
    evaluated: int  # prompt tokens the engine evaluated for it


def start(settings: Settings, work: Path) -> subprocess.Popen[bytes]:
    process, _ = launch(settings, work / "daemon.log")
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()  # a clean shutdown: the daemon writes its KV states to disk
    process.wait(timeout=120)


def answer(settings: Settings, text: str) -> Answered:
    with DaemonClient(settings.daemon_url) as client:
        before = client.health()
        request = completion(text).model_copy(update={"path": SOURCE.name})
        done = [e for e in client.complete(request) if isinstance(e, DoneEvent)][-1]
        after = client.health()
    assert done.timings.first_token_ms is not None, "no first token"
    evaluated = after.engine["prompt_tokens_evaluated"] - before.engine["prompt_tokens_evaluated"]
    timings = done.timings
    return Answered(
        timings.first_token_ms, timings.prompt_ms, done.prompt_tokens, after.workload, evaluated
    )


def one_round(base: Settings) -> tuple[Answered, Answered]:
    work = Path(tempfile.mkdtemp(prefix="assist-bench-kvdisk-"))
    settings = base.model_copy(
        update={
            "port": free_port(),
            "cache_path": work / "cache.sqlite3",
            "metrics_path": work / "metrics.sqlite3",
        }
    )
    text = f"# {uuid.uuid4().hex}\n" + SOURCE.read_text() + CURSOR
    process = start(settings, work)
    try:
        cold = answer(settings, text)
    finally:
        stop(process)
    process = start(settings, work)
    try:
        restarted = answer(settings, text)
    finally:
        stop(process)
    return cold, restarted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    # The whole file in the prompt (no window cut to answer in time), nothing but the file.
    base = load_settings(
        prompt_budget_tokens=2400,
        context_budget_tokens=0,
        fast_deadline_ms=600000,
        deadline_limit_ms=600000,
    )
    rounds = [one_round(base) for _ in range(args.rounds)]
    print(f"first completion at the end of {SOURCE.name}, before and after a restart")
    for i, (cold, warm) in enumerate(rounds, 1):
        print(
            f"  round {i}: {cold.prompt_tokens} prompt tokens\n"
            f"    cold            prompt {cold.prompt_ms:8.0f} ms, first token "
            f"{cold.first_token_ms:8.0f} ms ({cold.evaluated} tokens evaluated)\n"
            f"    after restart   prompt {warm.prompt_ms:8.0f} ms, first token "
            f"{warm.first_token_ms:8.0f} ms ({warm.evaluated} evaluated, "
            f"{warm.workload['kv_disk_tokens_restored']} restored from disk)"
        )
    cold_ms = statistics.median(c.first_token_ms for c, _ in rounds)
    warm_ms = statistics.median(w.first_token_ms for _, w in rounds)
    cold_prompt = statistics.median(c.prompt_ms for c, _ in rounds)
    warm_prompt = statistics.median(w.prompt_ms for _, w in rounds)
    print(f"  time to first token, after a restart / cold: {warm_ms / cold_ms:.3f}x")
    ratio = warm_prompt / cold_prompt
    print(f"  time until the prompt is in the KV cache, after a restart / cold: {ratio:.4f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
