"""The HTTP API (FastAPI): health, streaming completion, cache maintenance.

Every refusal is a JSON ``{"error": {"code", "message"}}`` with a 4xx status, produced in one
place; a stream that fails after it started ends with one ``error`` event instead. Bodies are
read with a size limit before parsing, so an oversized request costs nothing.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ValidationError

from daemon import __version__
from daemon.protocol import (
    CompleteRequest,
    ErrorEvent,
    FeedbackRequest,
    FixRequest,
    Health,
    encode_event,
)
from daemon.service import Service, ServiceError

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
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise ServiceError(422, "invalid_request", describe_validation(exc)) from None


async def ndjson(events: AsyncGenerator[Any, None]) -> AsyncIterator[bytes]:
    """One line per event; a failure mid-stream ends the stream with one error event."""
    try:
        async for event in events:
            yield encode_event(event)
    except Exception as exc:
        log.exception("stream failed")
        yield encode_event(ErrorEvent(code="internal", message=str(exc)))
    finally:
        await events.aclose()


def create_app(service: Service) -> FastAPI:
    app = FastAPI(title="assist", version=__version__, docs_url=None, redoc_url=None)
    settings = service.settings

    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, exc: ServiceError) -> JSONResponse:
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
    async def health() -> Health:
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

    @app.post("/v1/complete")
    async def complete(request: Request) -> StreamingResponse:
        body = await read_body(request, settings.max_request_bytes)
        events = await service.complete(parse_request(body, CompleteRequest))
        return StreamingResponse(ndjson(events), media_type=NDJSON)

    @app.post("/v1/fix")
    async def fix(request: Request) -> StreamingResponse:
        body = await read_body(request, settings.max_request_bytes)
        events = await service.fix(parse_request(body, FixRequest))
        return StreamingResponse(ndjson(events), media_type=NDJSON)

    @app.post("/v1/feedback")
    async def feedback(request: Request) -> dict[str, Any]:
        body = await read_body(request, settings.max_request_bytes)
        item = parse_request(body, FeedbackRequest)
        await service.run_db(
            service.cache.record_feedback, item.request_id, item.accepted, item.language
        )
        return {"recorded": True}

    @app.get("/v1/cache/stats")
    async def cache_stats() -> dict[str, Any]:
        stats: dict[str, Any] = await service.run_db(service.cache.stats)
        return stats

    @app.post("/v1/cache/clear")
    async def cache_clear() -> dict[str, Any]:
        removed = await service.run_db(service.cache.clear)
        return {"removed": removed}

    return app
