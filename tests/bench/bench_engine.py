"""The engine under load: concurrent completions, reuse after edits, the cost of a token.

In one run, on the embedded model (or ``--model``), in this process:

  concurrency  1, 4 and 16 completions of different documents sent at once against the same
               completions one after another: aggregate tokens/s and the P50/P99 latency of a
               request; the same against llama.cpp's llama-server with ``-np`` equal to the
               concurrency (built once from the pinned sources and cached; ``--no-server``
               skips it). The ratio (at once / one after another, tokens/s) is the headline.
               Cold: every document is new (its whole prompt is read, and on a CPU reading
               prompts is most of the work, which batching cannot share). Warm: each
               document was read before, as when programmers keep typing in their own files:
               the decoding that batching shares is most of the work.
  held         prompt and decode speed of a new document while 0, 2, 4 and 7 others (about
               1,500 tokens each) stay evaluated: in a KV stream per document, and in one
               unified cache, where attention runs over every cell in use.
  edits        the first token after an edit at the top, the middle and the end of a file of
               about 2,000 tokens, against the first token of the same file cold: keeping the
               prefix only (the default), and with ``reuse_after_edit`` (the chunks below the
               edit kept, moved), with how many of its answers are the cold one's.
  per token    milliseconds per generated token on one warm prompt, prompt included, against
               llama-server's on the same tokens.
  before       with ``--before DIR`` (a checkout of an earlier engine), a single request alone
               under both engines, in separate processes.

Run: .venv/bin/python tests/bench/bench_engine.py [--tokens 48] [--no-server] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from daemon.engine.jobs import Budget, Finished, Job
from daemon.engine.kv_states import SequenceStates
from daemon.engine.scheduler import Scheduler
from daemon.engine.worker import Engine
from daemon.settings import load_settings
from models.backend import cpu_threads
from models.loaded import LoadedModel
from models.resolve import resolve_model
from tests.bench.engine.llama_server import LlamaServer, build

N_CTX = 2048


def documents(count: int, lines: int = 40) -> list[str]:
    """``count`` different Python documents: the opening lines of standard-library modules,
    each cut after a line that opens a block, so the model has code to write."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    found: list[str] = []
    for path in sorted(stdlib.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace").split("\n")
        opens = [i for i, line in enumerate(text) if line.startswith("def ") and i >= lines]
        if not opens:
            continue
        cut = opens[0]
        found.append("\n".join(text[max(0, cut - lines) : cut + 1]) + "\n    ")
        if len(found) == count:
            return found
    raise RuntimeError(f"only {len(found)} documents found under {stdlib}")


def load(parallel: int, unified: bool = False, sequences: int | None = None) -> LoadedModel:
    """The model with ``parallel`` slots of ``N_CTX`` tokens (``sequences`` in all)."""
    settings = load_settings()
    return LoadedModel(
        resolve_model(settings.model_path, settings.cache_dir, settings.model),
        n_ctx=N_CTX,
        n_batch=512,
        n_threads=settings.n_threads,
        n_gpu_layers=settings.n_gpu_layers,
        prompt_format=None,
        fingerprint_memo=settings.cache_dir / "fingerprints.json",
        sequences=sequences or parallel + 1,
        kv_cells=N_CTX * (sequences or parallel),
        unified=unified,
    )


def prompt_tokens(model: LoadedModel, text: str) -> list[int]:
    head = [model.bos_token] if model.format.add_bos and model.bos_token is not None else []
    return head + model.tokenize_text(text)


class Timed:
    """One engine job's times and token count."""

    def __init__(self, engine: Engine, tokens: list[int], max_tokens: int) -> None:
        self.events: queue.Queue = queue.Queue()
        self.submitted = time.perf_counter()
        self.job: Job = engine.submit(
            tokens, Budget(max_tokens, time.perf_counter() + 600), sink=self.events.put
        )

    def wait(self) -> tuple[float, int]:
        while not isinstance(done := self.events.get(timeout=600), Finished):
            pass
        assert self.job.finished_at is not None
        self.text = done.text
        return self.job.finished_at - self.submitted, done.tokens

    @property
    def first_token_s(self) -> float:
        assert self.job.prompt_done_at is not None
        return self.job.prompt_done_at - self.submitted


def summary(latencies: list[float], tokens: int, wall: float) -> dict[str, float]:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "tokens_per_s": tokens / wall,
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * p99,
        "wall_s": wall,
        "tokens": tokens,
    }


def engine_concurrency(
    prompts: list[list[int]], max_tokens: int, model: LoadedModel, warm: bool = False
):
    """The prompts one after another, then all at once. Cold: each phase starts from an
    empty KV cache. Warm: every document was read once before, as when each programmer
    keeps typing in a file of their own, so each request evaluates one token of its prompt."""
    engine = Engine(model, Scheduler(64, 64), SequenceStates(0), parallel=len(prompts))
    engine.start()
    try:
        engine.slots.clear()
        if warm:
            for tokens in prompts:
                Timed(engine, tokens, 0).wait()
        began, latencies, total, reading = time.perf_counter(), [], 0, 0.0
        for tokens in prompts:
            timed = Timed(engine, tokens, max_tokens)
            latency, made = timed.wait()
            latencies.append(latency)
            total += made
            reading += timed.first_token_s
        serial = summary(latencies, total, time.perf_counter() - began)
        # The share of one-after-another time spent reading prompts: work that batching
        # cannot share, since a prompt is read in big batches already.
        serial["reading_share"] = reading / serial["wall_s"]
        if not warm:
            engine.slots.clear()
        began = time.perf_counter()
        timed = [Timed(engine, tokens, max_tokens) for tokens in prompts]
        results = [t.wait() for t in timed]
        together = summary(
            [r[0] for r in results], sum(r[1] for r in results), time.perf_counter() - began
        )
        return {"serial": serial, "together": together, "batched_steps": engine.stats.batched_steps}
    finally:
        engine.close()


def server_concurrency(
    server: LlamaServer, prompts: list[list[int]], max_tokens: int, warm: bool = False
):
    """As ``engine_concurrency``, against llama-server (warm: its prompt cache, a document
    per slot)."""

    def one(tokens: list[int]) -> tuple[float, int]:
        began = time.perf_counter()
        made = server.complete(tokens, max_tokens, cache=warm)
        return time.perf_counter() - began, made

    if warm:
        for tokens in prompts:
            server.complete(tokens, 1, cache=True)

    began = time.perf_counter()
    results = [one(tokens) for tokens in prompts]
    serial = summary(
        [r[0] for r in results], sum(r[1] for r in results), time.perf_counter() - began
    )
    began = time.perf_counter()
    with ThreadPoolExecutor(len(prompts)) as pool:
        results = list(pool.map(one, prompts))
    together = summary(
        [r[0] for r in results], sum(r[1] for r in results), time.perf_counter() - began
    )
    return {"serial": serial, "together": together}


def long_file(model: LoadedModel, target: int = 2000) -> str:
    parts, body = [], ""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.glob("*.py")):
        parts.append(path.read_text(encoding="utf-8", errors="replace"))
        body = "\n".join(parts)
        if len(model.tokenize_text(body)) > target:
            break
    lines = body.split("\n")
    while len(model.tokenize_text("\n".join(lines))) > target:
        lines = lines[: int(len(lines) * 0.95)]
    return "\n".join(lines) + "\n"


EDIT_MODES = ("prefix only", "reuse_after_edit")


def edits(model: LoadedModel, reuse_after_edit: bool, repeat: int = 3) -> dict[str, float]:
    """First-token time after an edit at the top, middle and end, against cold."""
    text = long_file(model)
    lines = text.split("\n")
    middle = len(lines) // 2
    edited = {
        "top": "import sys\n" + text,
        "middle": "\n".join([*lines[:middle], "# a comment added here", *lines[middle:]]),
        "end": text + "value = 1\n",
    }
    engine = Engine(
        model, Scheduler(8, 8), SequenceStates(0), parallel=1, reuse_after_edit=reuse_after_edit
    )
    engine.start()
    figures: dict[str, list[float]] = {"cold": [], "top": [], "middle": [], "end": []}
    same = 0
    try:
        original = prompt_tokens(model, text)
        for changed in edited.values():  # is the answer after the edit the cold one?
            engine.slots.clear()
            cold_answer = Timed(engine, prompt_tokens(model, changed), 16)
            cold_answer.wait()
            engine.slots.clear()
            Timed(engine, original, 1).wait()
            warm_answer = Timed(engine, prompt_tokens(model, changed), 16)
            warm_answer.wait()
            same += warm_answer.text == cold_answer.text
        for _ in range(repeat):
            engine.slots.clear()
            cold = Timed(engine, original, 1)
            cold.wait()
            figures["cold"].append(cold.first_token_s)
            for where, changed in edited.items():
                engine.slots.clear()
                Timed(engine, original, 1).wait()
                after = Timed(engine, prompt_tokens(model, changed), 1)
                after.wait()
                figures[where].append(after.first_token_s)
    finally:
        engine.close()
    medians = {k: 1000 * statistics.median(v) for k, v in figures.items()}
    medians["file_tokens"] = len(prompt_tokens(model, text))
    medians["same_as_cold"] = same
    medians["edits"] = len(edited)
    return medians


HELD_KINDS = ("a stream per document", "one unified cache")
HELD_COUNTS = (0, 2, 4, 7)


def held_documents(probe_text: str, unified: bool) -> list[dict[str, float]]:
    """Prompt and decode speed of a new document while others stay evaluated in the KV cache
    (each about 1,500 tokens): in a stream per document, and in one unified cache."""
    model = load(4, unified=unified, sequences=9)
    engine = Engine(model, Scheduler(16, 16), SequenceStates(0), parallel=4)
    engine.start()
    rows = []
    try:
        big = documents(max(HELD_COUNTS), lines=110)
        held = 0
        for count in HELD_COUNTS:
            while held < count:
                Timed(engine, prompt_tokens(model, big[held]), 0).wait()
                held += 1
            probe = prompt_tokens(model, f"# probe {count}\n{probe_text}")
            timed = Timed(engine, probe, 32)
            seconds, made = timed.wait()
            reading = timed.first_token_s
            rows.append(
                {
                    "held": count,
                    "prompt_tps": len(probe) / reading,
                    "decode_tps": made / max(1e-9, seconds - reading),
                }
            )
    finally:
        engine.close()
        model.close()
    return rows


def per_token(model: LoadedModel, tokens: list[int], max_tokens: int, repeat: int = 5) -> float:
    engine = Engine(model, Scheduler(8, 8), SequenceStates(0), parallel=1)
    engine.start()
    try:
        Timed(engine, tokens, max_tokens).wait()
        costs = []
        for _ in range(repeat):
            seconds, made = Timed(engine, tokens, max_tokens).wait()
            costs.append(1000 * seconds / max(1, made))
        return statistics.median(costs)
    finally:
        engine.close()


def server_per_token(server: LlamaServer, tokens: list[int], max_tokens: int, repeat: int = 5):
    server.complete(tokens, max_tokens, cache=True)
    costs = []
    for _ in range(repeat):
        began = time.perf_counter()
        made = server.complete(tokens, max_tokens, cache=True)
        costs.append(1000 * (time.perf_counter() - began) / max(1, made))
    return statistics.median(costs)


SINGLE = """
import json, statistics, sys, time, inspect, queue
sys.path.insert(0, sys.argv[1])
from daemon.engine.jobs import Budget, Finished
from daemon.engine.kv_states import SequenceStates
from daemon.engine.scheduler import Scheduler
from daemon.engine.worker import Engine
from daemon.settings import load_settings
from models.loaded import LoadedModel
from models.resolve import resolve_model
s = load_settings()
multi = "sequences" in inspect.signature(LoadedModel).parameters
extra = {"sequences": 2, "kv_cells": 2048} if multi else {}
m = LoadedModel(resolve_model(s.model_path, s.cache_dir, s.model), n_ctx=2048, n_batch=512,
    n_threads=s.n_threads, n_gpu_layers=s.n_gpu_layers, prompt_format=None,
    fingerprint_memo=s.cache_dir / "fingerprints.json", **extra)
e = Engine(m, Scheduler(8, 8), SequenceStates(0))
e.start()
prompts = json.loads(sys.argv[2])
times = []
for rep in range(int(sys.argv[3])):
    for p in prompts:
        q = queue.Queue()
        began = time.perf_counter()
        e.submit([*p[:-1], p[-1]], Budget(int(sys.argv[4]), time.perf_counter() + 600), sink=q.put)
        while not isinstance(q.get(timeout=600), Finished):
            pass
        times.append(time.perf_counter() - began)
print(json.dumps({"median_ms": 1000 * statistics.median(times)}))
e.close()
"""


def single_under(code: Path, prompts: list[list[int]], max_tokens: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(code))
    out = subprocess.run(
        [sys.executable, "-c", SINGLE, str(code), json.dumps(prompts), "3", str(max_tokens)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["median_ms"])


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tokens", type=int, default=48, help="tokens per completion")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--no-server", action="store_true", help="skip llama-server")
    parser.add_argument("--before", type=Path, help="a checkout of an earlier engine")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument(
        "--only-edits", action="store_true", help="measure the first token after edits only"
    )
    parser.add_argument(
        "--only-held", action="store_true", help="measure speed with documents held only"
    )
    parser.add_argument(
        "--only-concurrency", action="store_true", help="measure concurrent completions only"
    )
    args = parser.parse_args()
    settings = load_settings()
    model_path = resolve_model(settings.model_path, settings.cache_dir, settings.model).path
    binary = None if args.no_server else build()
    texts = documents(max(args.concurrency))
    report: dict[str, object] = {"tokens": args.tokens, "concurrency": {}}
    if args.only_held:
        for kind in HELD_KINDS:
            rows = held_documents(texts[0], kind == "one unified cache")
            print_held(kind, rows)
        return 0
    if args.only_edits:
        model = load(1)
        report["edits"] = {mode: edits(model, mode == EDIT_MODES[1]) for mode in EDIT_MODES}
        model.close()
        print_report(report)
        return 0
    for n in args.concurrency:
        progress(f"{n} at once")
        model = load(n)
        prompts = [prompt_tokens(model, t) for t in texts[:n]]
        row: dict[str, object] = {}
        for warm in (False, True):
            label = "warm" if warm else "cold"
            row[f"assist {label}"] = engine_concurrency(prompts, args.tokens, model, warm)
            if binary is not None:
                server = LlamaServer(binary, model_path, n, N_CTX, cpu_threads())
                try:
                    row[f"llama-server {label}"] = server_concurrency(
                        server, prompts, args.tokens, warm
                    )
                finally:
                    server.close()
        model.close()
        report["concurrency"][n] = row  # type: ignore[index]
    if args.only_concurrency:
        print_report(report)
        return 0
    progress("documents held")
    report["held"] = {
        kind: held_documents(texts[0], kind == "one unified cache") for kind in HELD_KINDS
    }
    progress("edits")
    model = load(1)
    report["edits"] = {mode: edits(model, mode == EDIT_MODES[1]) for mode in EDIT_MODES}
    progress("per token")
    one = prompt_tokens(model, texts[0])
    report["per_token_ms"] = {"assist": per_token(model, one, args.tokens)}
    model.close()
    if binary is not None:
        server = LlamaServer(binary, model_path, 1, N_CTX, cpu_threads())
        try:
            report["per_token_ms"]["llama-server"] = server_per_token(server, one, args.tokens)  # type: ignore[index]
        finally:
            server.close()
    if args.before is not None:
        progress("single request, this engine and the one before")
        model = load(1)
        few = [prompt_tokens(model, t) for t in texts[:4]]
        model.close()
        here = Path(__file__).resolve().parents[2]
        report["single_ms"] = {
            "now": single_under(here, few, args.tokens),
            "before": single_under(args.before.resolve(), few, args.tokens),
        }
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


def print_report(report: dict) -> None:
    print(f"engine benchmark: {report['tokens']} tokens per completion, greedy")
    print(f"  {'':<22} {'at once / serial':>17} {'tok/s at once':>14} {'p50 ms':>8} {'p99 ms':>8}")
    for n, row in report["concurrency"].items():
        for who, figures in row.items():
            if not isinstance(figures, dict):
                continue
            ratio = figures["together"]["tokens_per_s"] / figures["serial"]["tokens_per_s"]
            t = figures["together"]
            share = figures["serial"].get("reading_share")
            print(
                f"  {who + f' x{n}':<22} {ratio:>16.2f}x {t['tokens_per_s']:>14.1f} "
                f"{t['p50_ms']:>8.0f} {t['p99_ms']:>8.0f}"
                + (f"   (reading prompts: {share:.0%} of serial)" if share is not None else "")
            )
    for kind, rows in report.get("held", {}).items():
        print_held(kind, rows)
    if "edits" not in report:
        return
    for mode, figures in report["edits"].items():
        print_edits(mode, figures)
    if "per_token_ms" not in report:
        return
    costs = report["per_token_ms"]
    line = f"  ms per generated token, warm prompt: assist {costs['assist']:.1f}"
    if "llama-server" in costs:
        server = costs["llama-server"]
        line += f", llama-server {server:.1f} ({costs['assist'] / server:.2f}x)"
    print(line)
    if "single_ms" in report:
        s = report["single_ms"]
        print(
            f"  single request alone: {s['now']:.0f} ms now, {s['before']:.0f} ms before "
            f"({s['now'] / s['before']:.2f}x)"
        )


def print_held(kind: str, rows: list[dict[str, float]]) -> None:
    figures = ", ".join(
        f"{r['held']:.0f}: {r['prompt_tps']:.0f}/{r['decode_tps']:.1f}" for r in rows
    )
    print(f"  documents held, prompt/decode tok/s, {kind}: {figures}")


def print_edits(mode: str, e: dict) -> None:
    print(
        f"  first token, {e['file_tokens']}-token file, {mode}: cold {e['cold']:.0f} ms; "
        f"answers as cold after {e['same_as_cold']} of {e['edits']} edits"
    )
    for where in ("top", "middle", "end"):
        print(
            f"    after an edit at the {where:<6} {e[where]:7.0f} ms "
            f" ({e[where] / e['cold']:.3f}x cold)"
        )


if __name__ == "__main__":
    raise SystemExit(main())
