"""The HTTP API (FastAPI): health, streaming completion, cache maintenance.

Every refusal is a JSON ``{"error": {"code", "message"}}`` with a 4xx status, produced in one
place; a stream that fails after it started ends with one ``error`` event instead. Bodies are
read with a size limit before parsing, so an oversized request costs nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import Depends, FastAPI, Request, Response
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ValidationError

from daemon import __version__
from daemon.auth import LOCAL_USER, RateLimiter, TokenStore
from daemon.dashboard import render as render_dashboard
from daemon.gpu import gpu_figures
from daemon.metrics import MetricsRecorder, RequestRecord
from daemon.protocol import (
    CompleteRequest,
    DocumentRequest,
    DoneEvent,
    ErrorEvent,
    FeedbackRequest,
    FixRequest,
    Health,
    StageEvent,
    StartEvent,
    encode_event,
)
from daemon.service import Service, ServiceError
from daemon.stats import GROUPINGS, parse_window, summarize

log = logging.getLogger(__name__)

NDJSON = "application/x-ndjson"


def error_response(
    status: int, code: str, message: str, retry_after: int | None = None
) -> JSONResponse:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def describe_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{where}: {err['msg']}")
    more = len(exc.errors()) - 5
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refusing (413) anything over ``limit`` bytes without reading it all."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise ServiceError(400, "bad_request", "Content-Length is not a number") from None
        if size > limit:
            raise ServiceError(
                413,
                "too_large",
                f"the request body is {size} bytes; this daemon accepts at most {limit} "
                f"(setting max_request_bytes)",
            )
    chunks: list[bytes] = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            raise ServiceError(
                413, "too_large", f"the request body is over this daemon's limit of {limit} bytes"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def parse_request(body: bytes, model: type[BaseModel]) -> Any:
    if not body:
        raise ServiceError(400, "bad_request", "the request has no body; send a JSON object")
    try:
        json.loads(body)
    except UnicodeDecodeError:
        raise ServiceError(400, "bad_request", "the request body is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise ServiceError(
            400, "bad_request", f"the request body is not valid JSON: {exc}"
        ) from None
    except (ValueError, RecursionError) as exc:
        # An integer of thousands of digits, or arrays nested thousands deep.
        raise ServiceError(400, "bad_request", f"the request body cannot be read: {exc}") from None
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise ServiceError(422, "invalid_request", describe_validation(exc)) from None


def observe(record: RequestRecord, event: Any) -> None:
    """Fill a request's metrics record from the events it streams."""
    if isinstance(event, StartEvent):
        record.route = event.route
        record.language = event.language or record.language
    elif isinstance(event, StageEvent):
        record.stages[event.stage] = event.elapsed_ms
    elif isinstance(event, DoneEvent):
        t = event.timings
        record.outcome = "done"
        record.finish_reason = event.finish_reason
        record.cached = event.cached
        record.cache_match = event.cache_match or ("exact" if event.cached else None)
        record.total_ms, record.first_token_ms = t.total_ms, t.first_token_ms
        record.prompt_ms, record.queue_ms = t.prompt_ms, t.queue_ms
        record.tokens, record.prompt_tokens = event.tokens, event.prompt_tokens
        record.verified, record.changed = event.verified, event.changed
        record.route = event.route or record.route
    elif isinstance(event, ErrorEvent):
        record.outcome = event.code if event.code in ("replaced", "busy") else "error"
        record.error_code = event.code


async def ndjson(
    events: AsyncGenerator[Any, None],
    record: RequestRecord | None = None,
    recorder: MetricsRecorder | None = None,
) -> AsyncIterator[bytes]:
    """One line per event; a failure mid-stream ends the stream with one error event. The
    request's metrics record is handed over once the stream has ended, however it ended."""
    try:
        async for event in events:
            if record is not None:
                observe(record, event)
            yield encode_event(event)
    except Exception as exc:
        log.exception("stream failed")
        if record is not None:
            record.outcome, record.error_code = "error", "internal"
        yield encode_event(ErrorEvent(code="internal", message=str(exc)))
    finally:
        await events.aclose()
        if record is not None and recorder is not None:
            recorder.record(record)


def add_request_schemas(app: FastAPI, bodies: dict[str, type[BaseModel]]) -> None:
    """Describe the JSON bodies the handlers read themselves (they read them with a size limit
    first), so the OpenAPI description is complete for clients and fuzzers."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for path, model in bodies.items():
            model_schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(model_schema.pop("$defs", {}))
            components[model.__name__] = model_schema
            schema["paths"][path]["post"]["requestBody"] = {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {"$ref": f"#/components/schemas/{model.__name__}"}
                    }
                },
            }
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def create_app(service: Service, tokens: TokenStore | None = None) -> FastAPI:
    app = FastAPI(title="assist", version=__version__, docs_url=None, redoc_url=None)
    settings = service.settings
    limiter = RateLimiter(settings.rate_limit_per_minute, settings.rate_limit_burst)

    async def authenticate(request: Request) -> str:
        """The user behind a request: from its token when the daemon has tokens."""
        if tokens is None:
            claimed = request.headers.get("x-assist-user", LOCAL_USER)
            user = claimed if claimed and len(claimed) <= 64 else LOCAL_USER
        else:
            header = request.headers.get("authorization", "")
            scheme, _, token = header.partition(" ")
            found = tokens.user_for(token.strip()) if scheme.lower() == "bearer" else None
            if found is None:
                client = request.client.host if request.client else "unknown"
                log.warning(
                    "refused %s %s from %s: %s",
                    request.method,
                    request.url.path,
                    client,
                    "no token" if not header else "unknown token",
                )
                raise ServiceError(
                    401, "unauthorized", "this daemon needs a valid token (Authorization: Bearer)"
                )
            user = found
        wait = limiter.take(user)
        if wait > 0:
            raise ServiceError(
                429,
                "rate_limited",
                f"{user} sent more than {settings.rate_limit_per_minute} requests a minute",
                retry_after=max(1, round(wait)),
            )
        return user

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        task = getattr(request.state, "task", None)
        if task is not None and service.metrics is not None:
            outcome = "busy" if exc.status == 429 else "refused"
            user = getattr(request.state, "user", LOCAL_USER)
            service.metrics.record(
                RequestRecord(task, None, None, user, outcome, error_code=exc.code)
            )
        return error_response(exc.status, exc.code, exc.message, exc.retry_after)

    @app.exception_handler(404)
    async def _not_found(request: Request, _: Exception) -> JSONResponse:
        return error_response(404, "not_found", f"no such endpoint: {request.url.path}")

    @app.exception_handler(405)
    async def _bad_method(request: Request, _: Exception) -> JSONResponse:
        return error_response(
            405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}"
        )

    @app.get("/health")
    async def health(user: str = Depends(authenticate)) -> Health:
        facts = service.model.facts
        stats = await service.run_db(service.cache.stats)
        engine = service.engine
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
            cache_status=service.cache.status,
            workload={
                **{f"queued_{k}": v for k, v in engine.scheduler.depth_by_priority().items()},
                "refused": engine.scheduler.stats.refused,
                "preempted": engine.scheduler.stats.preempted,
                "yielded": engine.stats.yielded,
                "flights": len(service.flights),
                "joined_flights": service.flights.joined,
                "typed_hits": service.typing.hits,
                "prefetched": service.prefetched,
                "kv_states": len(engine.states),
                "kv_state_bytes": engine.states.bytes,
                "kv_restored": engine.states.stats.restored,
                "kv_tokens_restored": engine.states.stats.tokens_restored,
            },
            engine={
                "busy": int(engine.busy),
                "jobs": engine.stats.jobs,
                "cancelled": engine.stats.cancelled,
                "deadline": engine.stats.deadline,
                "errors": engine.stats.errors,
                "tokens_generated": engine.stats.tokens_generated,
                "prompt_tokens_evaluated": engine.stats.prompt_tokens_evaluated,
                "prompt_tokens_reused": engine.stats.prompt_tokens_reused,
                "last_job_tokens": engine.stats.last_job_tokens,
                "last_job_reason": engine.stats.last_job_reason,
            },
            pid=os.getpid(),
        )

    async def streamed(
        request: Request,
        user: str,
        task: str,
        model: type[DocumentRequest],
        run: Callable[[Any, str], Awaitable[AsyncGenerator[Any, None]]],
    ) -> StreamingResponse:
        """Read, validate and run a request whose answer streams, with its metrics record."""
        # Set first: a request refused below (413, 422, 429) is recorded with its task too.
        request.state.task, request.state.user = task, user
        body = await read_body(request, settings.max_request_bytes)
        req = parse_request(body, model)
        record = RequestRecord(task, req.language, req.path, user, "cancelled")
        events = await run(req, user)
        return StreamingResponse(ndjson(events, record, service.metrics), media_type=NDJSON)

    @app.post("/v1/complete")
    async def complete(request: Request, user: str = Depends(authenticate)) -> StreamingResponse:
        return await streamed(request, user, "complete", CompleteRequest, service.complete)

    @app.post("/v1/fix")
    async def fix(request: Request, user: str = Depends(authenticate)) -> StreamingResponse:
        return await streamed(request, user, "fix", FixRequest, service.fix)

    def recorder() -> MetricsRecorder:
        if service.metrics is None:
            raise ServiceError(404, "no_metrics", "this daemon keeps no metrics (setting metrics)")
        return service.metrics

    async def current_stats(window: str, by: str) -> dict[str, Any]:
        metrics = recorder()
        try:
            window_s = parse_window(window)
        except ValueError:
            raise ServiceError(
                422, "invalid_request", f"window {window!r}: use 900, 15m, 1h or 7d"
            ) from None
        if by not in GROUPINGS:
            raise ServiceError(422, "invalid_request", f"by: one of {', '.join(GROUPINGS)}")
        await asyncio.to_thread(metrics.flush)
        since = time.time() - window_s
        rows = await asyncio.to_thread(metrics.rows, since)
        feedback = await asyncio.to_thread(metrics.feedback_rows, since)
        return summarize(rows, feedback, window_s, by)

    @app.get("/v1/stats")
    async def stats(
        window: str = "3600", by: str = "language", user: str = Depends(authenticate)
    ) -> dict[str, Any]:
        figures = await current_stats(window, by)
        figures["gpu"] = gpu_figures()
        figures["backend"] = service.model.facts.backend
        figures["model"] = service.model.facts.name
        return figures

    @app.get("/metrics")
    async def metrics(user: str = Depends(authenticate)) -> Response:
        metrics = recorder()
        await asyncio.to_thread(metrics.flush)
        metrics.prometheus.queue_depth.set(service.engine.queue_depth)
        cache = await service.run_db(service.cache.stats)
        metrics.prometheus.cache_entries.set(cache["entries"])
        return Response(
            generate_latest(metrics.prometheus.registry), media_type=CONTENT_TYPE_LATEST
        )

    @app.get("/dashboard", response_class=HTMLResponse)
    async def dashboard(
        window: str = "3600", by: str = "language", user: str = Depends(authenticate)
    ) -> HTMLResponse:
        figures = await current_stats(window, by)
        facts = service.model.facts
        gpus = await asyncio.to_thread(gpu_figures)
        return HTMLResponse(render_dashboard(figures, facts.name, facts.backend, gpus))

    @app.post("/v1/feedback")
    async def feedback(request: Request, user: str = Depends(authenticate)) -> dict[str, Any]:
        body = await read_body(request, settings.max_request_bytes)
        return await service.feedback(parse_request(body, FeedbackRequest), user)

    @app.get("/v1/cache/stats")
    async def cache_stats(user: str = Depends(authenticate)) -> dict[str, Any]:
        stats: dict[str, Any] = await service.run_db(service.cache.stats)
        stats["status"] = service.cache.status
        return stats

    @app.post("/v1/cache/clear")
    async def cache_clear(user: str = Depends(authenticate)) -> dict[str, Any]:
        removed = await service.run_db(service.cache.clear)
        return {"removed": removed}

    add_request_schemas(
        app,
        {"/v1/complete": CompleteRequest, "/v1/fix": FixRequest, "/v1/feedback": FeedbackRequest},
    )
    return app
