"""The parts of a running daemon put together: the runtime (model, engine, cache, metrics),
the two pipelines on it, prefetch, and the background tasks. ``daemon.http.serve`` builds one
from settings; the app serves it."""

from __future__ import annotations

from dataclasses import dataclass

from daemon.answers.completion import CompletionPipeline
from daemon.answers.prefetch import Prefetcher
from daemon.engine.kv_states import SequenceStates
from daemon.engine.scheduler import Scheduler
from daemon.engine.worker import Engine
from daemon.observe.metrics import MetricsRecorder
from daemon.pipeline.flights import FlightTable
from daemon.pipeline.runtime import Runtime
from daemon.repair.pipeline import RepairPipeline
from daemon.settings import Settings
from daemon.store.result_cache import ResultCache
from daemon.tasks import BackgroundTasks
from models.loaded import LoadedModel
from models.resolve import resolve_model


@dataclass
class Daemon:
    settings: Settings
    runtime: Runtime
    completions: CompletionPipeline
    repairs: RepairPipeline
    prefetcher: Prefetcher
    tasks: BackgroundTasks

    def close(self) -> None:
        """Stop the engine, then close the cache, the metrics and the model."""
        self.tasks.cancel_all()
        self.completions.warmer.cancel_all()
        runtime = self.runtime
        runtime.engine.close()
        runtime.close()
        if runtime.metrics is not None:
            runtime.metrics.close()
        runtime.cache.close()
        runtime.model.close()


def wire(settings: Settings, runtime: Runtime) -> Daemon:
    """The pipelines on ``runtime``, sharing one single-flight table, with prefetch wired in."""
    flights = FlightTable()
    tasks = BackgroundTasks("prefetch")
    completions = CompletionPipeline(runtime, settings, flights=flights)
    prefetcher = Prefetcher(completions.start, tasks)
    if settings.prefetch:
        completions.on_accepted = prefetcher.accepted
    repairs = RepairPipeline(runtime, settings, flights=flights)
    return Daemon(settings, runtime, completions, repairs, prefetcher, tasks)


def build_daemon(settings: Settings) -> Daemon:
    """Resolve and load the model, start and warm the engine, open the cache and metrics."""
    resolved = resolve_model(settings.model_path, settings.cache_dir, settings.model)
    model = LoadedModel(
        resolved,
        n_ctx=settings.n_ctx,
        n_batch=settings.n_batch,
        n_threads=settings.n_threads,
        n_gpu_layers=settings.n_gpu_layers,
        prompt_format=settings.prompt_format,
        fingerprint_memo=settings.cache_dir / "fingerprints.json",
        # Reuse after an edit evaluates gaps aside, in a scratch sequence sharing the slots'
        # cells: a unified cache. Otherwise each slot has a KV stream of its own.
        sequences=max(settings.kv_slots, settings.parallel) + int(settings.reuse_after_edit),
        kv_cells=settings.n_ctx * settings.parallel,
        unified=settings.reuse_after_edit,
    )
    scheduler = Scheduler(settings.queue_size, settings.user_queue_size)
    states = SequenceStates(settings.kv_states_bytes)
    engine = Engine(
        model,
        scheduler,
        states,
        chunk_tokens=settings.chunk_tokens,
        parallel=settings.parallel,
        reuse_after_edit=settings.reuse_after_edit,
    )
    engine.start()
    cache = ResultCache(
        settings.resolved_cache_path,
        max_entries=settings.cache_max_entries,
        max_bytes=settings.cache_max_bytes,
        memory_entries=settings.cache_memory_entries,
    )
    metrics = None
    if settings.metrics:
        metrics = MetricsRecorder(
            settings.resolved_metrics_path,
            retention_days=settings.metrics_retention_days,
            max_rows=settings.metrics_max_rows,
            p99_warn_ms=settings.p99_warn_ms,
            hit_rate_floor=settings.hit_rate_floor,
            check_s=settings.metrics_check_s,
        )
    return wire(settings, Runtime(model, engine, cache, metrics))
