"""The parts of a running daemon put together: the runtime, the two pipelines, background work.
``daemon.http.serve`` builds one from settings; the app serves it.
"""

from __future__ import annotations

from dataclasses import dataclass

import xxhash

from daemon.answers.completion import CompletionPipeline
from daemon.answers.prefetch import Prefetcher
from daemon.engine.gpu_sizing import Sizing, kv_streams
from daemon.engine.interface import ServingEngine
from daemon.engine.kv_disk import DiskStates, state_owner
from daemon.engine.kv_states import SequenceStates
from daemon.engine.remote.engine import RemoteEngine
from daemon.engine.remote.pool import BackendPool
from daemon.engine.scheduler import Scheduler
from daemon.engine.worker import Engine
from daemon.http.served_workspace import ServedWorkspace
from daemon.http.sizing import size_to_gpu
from daemon.observe.metrics import MetricsRecorder
from daemon.pipeline.flights import FlightTable
from daemon.pipeline.runtime import Runtime
from daemon.repair.pipeline import RepairPipeline
from daemon.settings import Settings
from daemon.store.result_cache import ResultCache
from daemon.tasks import BackgroundTasks
from models.loaded import THINKING_MARKERS, LoadedModel
from models.resolve import ModelNotFound, ResolvedModel, resolve_model


@dataclass
class Daemon:
    settings: Settings
    runtime: Runtime
    completions: CompletionPipeline
    repairs: RepairPipeline
    prefetcher: Prefetcher
    tasks: BackgroundTasks
    workspace: ServedWorkspace | None = None  # the folder the operator named, if any
    sizing: Sizing | None = None  # how parallel, kv_slots and n_ctx were chosen

    def close(self) -> None:
        """Stop the engine, then close the cache, the metrics and the model."""
        if self.workspace is not None:
            self.workspace.stop()
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
    workspace = None
    if settings.workspace is not None:
        workspace = ServedWorkspace(settings.workspace)
        workspace.start()
    return Daemon(settings, runtime, completions, repairs, prefetcher, tasks, workspace)


def build_daemon(settings: Settings) -> Daemon:
    """Resolve and load the model (the engine sized to the GPU where there is one), start and
    warm the engine (or reach the remote backends), open the cache and metrics."""
    resolved = resolve_model(settings.model_path, settings.cache_dir, settings.model)
    scheduler = Scheduler(settings.queue_size, settings.user_queue_size)
    engine: ServingEngine
    settings, sizing = size_to_gpu(settings, resolved)
    if settings.backend:
        model, engine = remote_engine(settings, resolved, scheduler)
    else:
        model, engine = local_engine(settings, resolved, scheduler)
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
    daemon = wire(settings, Runtime(model, engine, cache, metrics))
    daemon.sizing = sizing
    return daemon


def local_engine(
    settings: Settings, resolved: ResolvedModel, scheduler: Scheduler
) -> tuple[LoadedModel, Engine]:
    """The model loaded here, and the engine that decodes on it."""
    model = LoadedModel(
        resolved,
        n_ctx=settings.n_ctx,
        n_batch=settings.n_batch,
        n_threads=settings.n_threads,
        n_gpu_layers=settings.n_gpu_layers,
        prompt_format=settings.prompt_format,
        fingerprint_memo=settings.cache_dir / "fingerprints.json",
        flash_attn=settings.flash_attn,
        # Each slot has a KV stream of its own, and one more stream is the spare that slots
        # are exchanged through and edited lines are evaluated in (daemon.engine.slots).
        sequences=kv_streams(settings.parallel, settings.kv_slots, settings.reuse_after_edit),
    )
    disk = None
    if settings.kv_disk_bytes > 0:
        disk = DiskStates(settings.resolved_kv_path, state_owner(model), settings.kv_disk_bytes)
    engine = Engine(
        model,
        scheduler,
        SequenceStates(settings.kv_states_bytes, disk),
        chunk_tokens=settings.chunk_tokens,
        parallel=settings.parallel,
        reuse_after_edit=settings.reuse_after_edit,
        fork_cost_limit=settings.candidates_cost_limit,
        branch_below=settings.candidates_branch_below,
    )
    return model, engine


def remote_engine(
    settings: Settings, resolved: ResolvedModel, scheduler: Scheduler
) -> tuple[LoadedModel, RemoteEngine]:
    """The model file's vocabulary and prompt format, and an engine over the backends; the
    backends are checked once first, and one must name the model it serves (or
    ``backend_model`` name it), so that the cache keys name the model that writes the answers."""
    pool = BackendPool(
        settings.backend,
        settings.backend_limit,
        check_s=settings.backend_check_s,
        api_key=settings.backend_api_key,
        markers=THINKING_MARKERS,
    )
    up = pool.check_all()
    served = sorted({s.model_id for s in pool.servers if s.model_id})
    name = settings.backend_model or (served[0] if served else None)
    if name is None:
        problems = "; ".join(f"{s.url}: {s.last_error}" for s in pool.servers)
        pool.close()
        if not up:
            raise ModelNotFound(
                f"none of the {len(settings.backend)} backends answered ({problems}); start "
                f"them first, or name the model they serve with --backend-model"
            )
        raise ModelNotFound(
            "no backend named its model in GET /v1/models; name the model they serve with "
            "--backend-model"
        )
    model = LoadedModel(
        resolved,
        n_ctx=settings.n_ctx,
        n_batch=settings.n_batch,
        n_threads=settings.n_threads,
        n_gpu_layers=0,
        prompt_format=settings.prompt_format,
        fingerprint_memo=settings.cache_dir / "fingerprints.json",
        vocab_only=True,
    )
    facts = model.facts
    facts.extra["vocabulary"] = facts.name
    facts.name = name
    facts.backend = f"remote ({up} of {len(pool.servers)} backends up)"
    facts.gpu_offload = False
    # Answers come from the backends' model: results are cached under its name, not the file's.
    facts.fingerprint = remote_fingerprint(name, facts.fingerprint)
    return model, RemoteEngine(model, pool, scheduler, model_name=name)


def remote_fingerprint(served: str, vocabulary: str) -> str:
    return xxhash.xxh3_128_hexdigest(f"remote\0{served}\0{vocabulary}".encode())
