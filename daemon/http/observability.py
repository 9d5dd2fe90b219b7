"""The endpoints that show how the daemon is doing: health, metrics, stats, the dashboard."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import HTMLResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from daemon import __version__
from daemon.errors import InvalidRequest, NoMetrics
from daemon.http.assembly import Daemon
from daemon.http.dependencies import LimitedUser, ServedParts, User
from daemon.observe.backends import BackendCollector
from daemon.observe.dashboard import render as render_dashboard
from daemon.observe.gpu import gpu_devices, gpu_figures
from daemon.observe.gpu_metrics import GpuCollector
from daemon.observe.metrics import MetricsRecorder
from daemon.observe.stats import GROUPINGS, parse_window, summarize
from daemon.pipeline.runtime import Runtime
from daemon.protocol import Health

router = APIRouter()


def register_collectors(runtime: Runtime) -> None:
    """With metrics kept, ``/metrics`` shows each GPU (NVML) and, with generation on remote
    backends, each backend."""
    if runtime.metrics is None:
        return
    registry = runtime.metrics.prometheus.registry
    registry.register(GpuCollector(gpu_devices))
    if runtime.engine.kind == "remote":
        registry.register(BackendCollector(runtime.engine.backends))


@router.get("/health")
async def health(user: User, parts: ServedParts) -> Health:
    return await health_of(parts.daemon)


async def health_of(daemon: Daemon) -> Health:
    """The daemon's state: its model, cache, queue, engine and the work it has done."""
    runtime = daemon.runtime
    facts = runtime.model.facts
    stats = await runtime.run_db(runtime.cache.stats)
    engine = runtime.engine
    report = engine.report()
    return Health(
        status="ok" if engine.ready.is_set() else "loading",
        version=__version__,
        model=facts.name,
        model_path=facts.path,
        model_source=facts.source,
        fingerprint=facts.fingerprint,
        prompt_format=facts.prompt_format,
        backend=facts.backend,
        gpu_offload=facts.gpu_offload,
        n_ctx=facts.n_ctx,
        cache_path=stats["path"],
        cache_entries=stats["entries"],
        cache_bytes=stats["file_bytes"],
        queue_depth=engine.queue_depth,
        cache_status=runtime.cache.status,
        workload={
            **report.queue.as_json(),
            **daemon.completions.workload(),
            "prefetched": daemon.prefetcher.prefetched,
            **report.saved_states.as_json(),
        },
        engine=report.figures.as_json(),
        workspace=str(daemon.workspace.root) if daemon.workspace is not None else None,
        sizing=daemon.sizing.as_json() if daemon.sizing is not None else None,
        pid=os.getpid(),
    )


def recorder(runtime: Runtime) -> MetricsRecorder:
    if runtime.metrics is None:
        raise NoMetrics("this daemon keeps no metrics (setting metrics)")
    return runtime.metrics


async def current_stats(runtime: Runtime, window: str, by: str) -> dict[str, Any]:
    """The requests and feedback of the last ``window``, summed up ``by`` a grouping."""
    metrics = recorder(runtime)
    try:
        window_s = parse_window(window)
    except ValueError:
        raise InvalidRequest(f"window {window!r}: use 900, 15m, 1h or 7d") from None
    if by not in GROUPINGS:
        raise InvalidRequest(f"by: one of {', '.join(GROUPINGS)}")
    await asyncio.to_thread(metrics.flush)
    since = time.time() - window_s
    rows = await asyncio.to_thread(metrics.rows, since)
    feedback = await asyncio.to_thread(metrics.feedback_rows, since)
    return summarize(rows, feedback, window_s, by)


@router.get("/v1/stats")
async def stats(
    user: LimitedUser, parts: ServedParts, window: str = "3600", by: str = "language"
) -> dict[str, Any]:
    runtime = parts.daemon.runtime
    figures = await current_stats(runtime, window, by)
    figures["gpu"] = gpu_figures()
    figures["backend"] = runtime.model.facts.backend
    figures["model"] = runtime.model.facts.name
    figures["backends"] = runtime.engine.backends()
    return figures


@router.get("/metrics")
async def metrics(user: User, parts: ServedParts) -> Response:
    runtime = parts.daemon.runtime
    recorded = recorder(runtime)
    await asyncio.to_thread(recorded.flush)
    recorded.prometheus.queue_depth.set(runtime.engine.queue_depth)
    cache = await runtime.run_db(runtime.cache.stats)
    recorded.prometheus.cache_entries.set(cache["entries"])
    await asyncio.to_thread(recorded.refresh_recent)
    # Off the event loop: the GPU gauges ask NVML at each scrape.
    text = await asyncio.to_thread(generate_latest, recorded.prometheus.registry)
    return Response(text, media_type=CONTENT_TYPE_LATEST)


@router.get("/dashboard", response_class=HTMLResponse)
async def dashboard(
    user: LimitedUser, parts: ServedParts, window: str = "3600", by: str = "language"
) -> HTMLResponse:
    runtime = parts.daemon.runtime
    figures = await current_stats(runtime, window, by)
    facts = runtime.model.facts
    gpus = await asyncio.to_thread(gpu_figures)
    backends = runtime.engine.backends()
    return HTMLResponse(render_dashboard(figures, facts.name, facts.backend, gpus, backends))
