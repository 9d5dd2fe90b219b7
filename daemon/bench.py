"""``assist bench``: the same completion cold, warm and cached, against llama-cpp-python.
The daemon's overhead is measured against direct calls with the same prompt and token count.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.engine.jobs import Budget, Job
from daemon.engine.worker import Engine
from daemon.protocol import CompleteRequest, DoneEvent, WorkspaceProfile
from daemon.settings import Settings

if TYPE_CHECKING:
    from models.loaded import LoadedModel

SAMPLE = '''import json
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Config:
    name: str
    port: int = 8080
    debug: bool = False


def parse_port(value: str) -> int:
    """Parse a TCP port number, rejecting values outside 1..65535."""
    port = int(value)
    if not 1 <= port <= 65535:
        raise ValueError(f"port out of range: {port}")
    return port


def load_config(path: Path) -> Config:
    """Read a JSON config file and return it as a Config, with defaults for missing keys."""
    with path.open() as handle:
        data = json.load(handle)
'''
PROFILE = WorkspaceProfile(language="python", versions={"python": ">=3.11"})
# llama.cpp's CPU threads spin for a moment after work; let them settle between runs.
SETTLE_S = 0.3


@dataclass
class BenchResult:
    model: str
    backend: str
    prompt_tokens: int
    tokens: int
    repeat: int
    cold_miss_ms: float
    cold_first_token_ms: float
    warm_miss_ms: float
    warm_first_token_ms: float
    hit_ms: float
    tokens_per_second: float
    direct_ms: float
    direct_tokens: int
    engine_ms: float
    hit_speedup: float
    overhead_ratio: float
    engine_ratio: float
    service_ratio: float
    composed_ratio: float


# Everything is measured in one run on this machine: a daemon is started on a free loopback port
# with an empty cache of its own, and the same model is loaded in this process for the direct
# calls. Runs alternate between the daemon and the direct call so that both see the same machine
# load. Figures are medians.
def _timed(client: DaemonClient, request: CompleteRequest) -> tuple[float, DoneEvent]:
    start = time.perf_counter()
    done = None
    for event in client.complete(request):
        if isinstance(event, DoneEvent):
            done = event
    elapsed = (time.perf_counter() - start) * 1000
    if done is None:
        raise RuntimeError("the daemon did not finish the completion")
    return elapsed, done


def engine_job(engine: Engine, tokens: list[int], count: int) -> float:
    """Milliseconds for the engine's generation loop to write ``count`` tokens after ``tokens``.

    The job runs on this thread, as the direct call does: llama.cpp's CPU threads are then
    the same for both, and only the loops differ."""
    job = Job(list(tokens), Budget(count, time.perf_counter() + 120), (), lambda event: None)
    start = time.perf_counter()
    engine.run_here(job)
    return (time.perf_counter() - start) * 1000


def _request(text: str, tokens: int, cache: bool) -> CompleteRequest:
    lines = text.split("\n")
    return CompleteRequest(
        text=text + "    ",
        line=len(lines) - 1,
        column=4,
        path="config.py",
        profile=PROFILE,
        max_tokens=tokens,
        cache=cache,
        mode="fast",  # one pass, the same work as the direct call
    )


@dataclass
class _Samples:
    """Each run's figures, in milliseconds but for the decoding rates."""

    cold: list[float] = field(default_factory=list)
    cold_first: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    warm_first: list[float] = field(default_factory=list)
    warm_engine: list[float] = field(default_factory=list)
    direct: list[float] = field(default_factory=list)
    in_process: list[float] = field(default_factory=list)
    hits: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    generated: int = 0
    direct_tokens: int = 0


def measure(settings: Settings, repeat: int, tokens: int) -> BenchResult:
    """Start a daemon of its own and load the same model here, then time ``repeat`` runs of
    each kind, alternating."""
    work = Path(tempfile.mkdtemp(prefix="assist-bench-"))
    bench_settings = settings.model_copy(
        update={
            "port": free_port(),
            "host": "127.0.0.1",
            "url": None,
            "cache_path": work / "cache.sqlite3",
        }
    )
    process, health = launch(bench_settings, work / "daemon.log")
    try:
        client = DaemonClient(bench_settings.daemon_url)
        model = _direct_model(settings)
        warm_request = _request(SAMPLE, tokens, cache=False)
        built = _prompt_tokens(model, settings, warm_request)
        engine = Engine(model)  # not started: engine_job runs its loop on this thread
        samples = _Samples()
        _timed(client, warm_request)  # the daemon's first request pays one-off costs
        for run in range(repeat):
            _one_run(client, model, engine, built, tokens, run, samples)
        _hits(client, tokens, max(repeat, 5), samples)
        model.close()
        client.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    return _result(health.model, health.backend, len(built), repeat, samples)


def _direct_model(settings: Settings) -> LoadedModel:
    """The daemon's model, loaded in this process for the direct calls."""
    from models.backend import cpu_threads
    from models.loaded import LoadedModel
    from models.resolve import resolve_model

    resolved = resolve_model(settings.model_path, settings.cache_dir, settings.model)
    return LoadedModel(
        resolved,
        n_ctx=settings.n_ctx,
        n_batch=settings.n_batch,
        n_threads=settings.n_threads or cpu_threads(),
        n_gpu_layers=settings.n_gpu_layers,
        prompt_format=settings.prompt_format,
        fingerprint_memo=settings.cache_dir / "fingerprints.json",
        flash_attn=settings.flash_attn,
    )


def _prompt_tokens(model: LoadedModel, settings: Settings, request: CompleteRequest) -> list[int]:
    """The prompt the daemon builds for ``request``, for the direct calls."""
    from daemon.cursor import Cursor
    from daemon.prompt.build import build_prompt
    from daemon.prompt.header import render_header

    built = build_prompt(
        model.format,
        model,
        Cursor.locate(request.text, request.line, request.column),
        budget=settings.prompt_budget_tokens,
        suffix_budget=settings.suffix_budget_tokens,
        header=render_header(PROFILE, "python", "config.py"),
    )
    return list(built.tokens)


def _one_run(
    client: DaemonClient,
    model: LoadedModel,
    engine: Engine,
    built: list[int],
    tokens: int,
    run: int,
    samples: _Samples,
) -> None:
    """One run of each kind: cold and warm through the daemon, the direct call, and the
    daemon's engine in this process."""
    # Cold: a different first line, so no KV prefix and no cached result apply.
    cold_text = f"# run {run} {time.time_ns()}\n" + SAMPLE
    elapsed, done = _timed(client, _request(cold_text, tokens, cache=False))
    samples.cold.append(elapsed)
    samples.cold_first.append(done.timings.first_token_ms or elapsed)
    time.sleep(SETTLE_S)
    # Warm: the same prompt again, result cache bypassed; the KV prefix is reused.
    warm_request = _request(SAMPLE, tokens, cache=False)
    _timed(client, warm_request)
    time.sleep(SETTLE_S)
    elapsed, done = _timed(client, warm_request)
    samples.warm.append(elapsed)
    samples.warm_engine.append(done.timings.engine_ms or elapsed)
    samples.warm_first.append(done.timings.first_token_ms or elapsed)
    samples.generated = generated = done.tokens
    t = done.timings
    decode_ms = t.total_ms - t.prompt_ms - t.queue_ms
    if done.tokens > 1 and decode_ms > 0:
        samples.rates.append(done.tokens / (decode_ms / 1000))
    time.sleep(SETTLE_S)
    # Direct: llama-cpp-python on the same prompt tokens, warm KV, same token count.
    llm = model.llm
    llm.create_completion(built, max_tokens=generated, temperature=0.0)
    time.sleep(SETTLE_S)
    start = time.perf_counter()
    out: Any = llm.create_completion(built, max_tokens=generated, temperature=0.0)
    samples.direct.append((time.perf_counter() - start) * 1000)
    samples.direct_tokens = out["usage"]["completion_tokens"]
    time.sleep(SETTLE_S)
    # The daemon's engine, in this process, on the same model: without HTTP and the
    # service, what the generation loop itself costs against llama-cpp-python's.
    engine_job(engine, built, generated)
    time.sleep(SETTLE_S)
    samples.in_process.append(engine_job(engine, built, generated))
    time.sleep(SETTLE_S)


def _hits(client: DaemonClient, tokens: int, count: int, samples: _Samples) -> None:
    """The same request ``count`` times once its answer is cached."""
    _timed(client, _request(SAMPLE, tokens, cache=True))  # store the result
    for _ in range(count):
        elapsed, done = _timed(client, _request(SAMPLE, tokens, cache=True))
        if not done.cached:
            raise RuntimeError(
                "the repeated request was not answered from the cache: only verified "
                "answers are cached, and one cut this short does not parse; use a larger "
                "--completion-tokens"
            )
        samples.hits.append(elapsed)


def _result(model: str, backend: str, prompt_tokens: int, repeat: int, s: _Samples) -> BenchResult:
    med = statistics.median
    return BenchResult(
        model=model,
        backend=backend,
        prompt_tokens=prompt_tokens,
        tokens=s.generated,
        repeat=repeat,
        cold_miss_ms=med(s.cold),
        cold_first_token_ms=med(s.cold_first),
        warm_miss_ms=med(s.warm),
        warm_first_token_ms=med(s.warm_first),
        hit_ms=med(s.hits),
        tokens_per_second=med(s.rates) if s.rates else 0.0,
        direct_ms=med(s.direct),
        direct_tokens=s.direct_tokens,
        engine_ms=med(s.in_process),
        hit_speedup=med(s.warm) / med(s.hits),
        overhead_ratio=med(s.warm) / med(s.direct),
        engine_ratio=med(s.in_process) / med(s.direct),
        service_ratio=med(s.warm) / med(s.warm_engine),
        composed_ratio=(med(s.in_process) / med(s.direct)) * (med(s.warm) / med(s.warm_engine)),
    )


def report(result: BenchResult) -> str:
    r = result
    note = "" if r.direct_tokens == r.tokens else f" (direct made {r.direct_tokens} tokens)"
    return "\n".join(
        [
            f"assist bench: {r.model} on {r.backend}, prompt {r.prompt_tokens} tokens, "
            f"{r.tokens} tokens per completion, median of {r.repeat} runs",
            f"  cold miss        {r.cold_miss_ms:8.1f} ms"
            f"   first token {r.cold_first_token_ms:7.1f} ms",
            f"  warm miss        {r.warm_miss_ms:8.1f} ms"
            f"   first token {r.warm_first_token_ms:7.1f} ms",
            f"  cache hit        {r.hit_ms:8.2f} ms",
            f"  tokens/s         {r.tokens_per_second:8.1f}",
            f"  direct llama-cpp-python {r.direct_ms:.1f} ms{note}",
            f"  hit speed-up     {r.hit_speedup:8.0f}x  (warm miss / hit; target >= 50x)",
            f"  daemon overhead  {r.overhead_ratio:8.3f}x (warm miss / direct, two processes)",
            f"    loop           {r.engine_ratio:8.3f}x (the engine's loop / direct, same thread)",
            f"    service        {r.service_ratio:8.3f}x (warm miss / its time in the engine)",
            f"    loop x service {r.composed_ratio:8.3f}x (target <= 1.10x; free of the noise "
            f"between processes)",
        ]
    )


def run_bench(settings: Settings, repeat: int, tokens: int, as_json: bool) -> int:
    from models.resolve import ModelNotFound

    try:
        result = measure(settings, repeat, tokens)
    except ModelNotFound as exc:
        print(f"assist: {exc}")
        return 1
    print(json.dumps(asdict(result), indent=2) if as_json else report(result))
    return 0
