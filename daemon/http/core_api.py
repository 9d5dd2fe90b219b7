"""The daemon's own API: completions, repairs, feedback and the result cache's endpoints.
``/v1/complete`` and ``/v1/fix`` stream NDJSON; ``/v1/feedback``, ``/v1/cache/...``."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from daemon.http.bodies import read_request
from daemon.http.dependencies import LimitedUser, Served, ServedParts
from daemon.http.ndjson import NDJSON, ndjson
from daemon.http.refusals import refusal_recorded
from daemon.observe.metrics import RequestRecord
from daemon.protocol import CompleteRequest, DocumentRequest, FeedbackRequest, FixRequest

router = APIRouter()

# The JSON bodies the handlers read themselves, for the OpenAPI description.
REQUEST_BODIES: dict[str, type[BaseModel]] = {
    "/v1/complete": CompleteRequest,
    "/v1/fix": FixRequest,
    "/v1/feedback": FeedbackRequest,
}


async def streamed(
    request: Request,
    user: str,
    parts: Served,
    task: str,
    model: type[DocumentRequest],
    start: Callable[[Any, str], Awaitable[AsyncGenerator[Any, None]]],
) -> StreamingResponse:
    """Read, validate and start a request whose answer streams, with its metrics record; a
    refusal before the stream (413, 422, 429) is recorded too."""
    daemon = parts.daemon
    with refusal_recorded(daemon.runtime, task, user):
        req = await read_request(request, model, daemon.settings.max_request_bytes)
        events = await start(req, user)
    record = RequestRecord(task, req.language, req.path, user, "cancelled")
    return StreamingResponse(ndjson(events, record, daemon.runtime.metrics), media_type=NDJSON)


@router.post("/v1/complete")
async def complete(request: Request, user: LimitedUser, parts: ServedParts) -> StreamingResponse:
    start = parts.daemon.completions.start
    return await streamed(request, user, parts, "complete", CompleteRequest, start)


@router.post("/v1/fix")
async def fix(request: Request, user: LimitedUser, parts: ServedParts) -> StreamingResponse:
    return await streamed(request, user, parts, "fix", FixRequest, parts.daemon.repairs.start)


@router.post("/v1/feedback")
async def feedback(request: Request, user: LimitedUser, parts: ServedParts) -> dict[str, Any]:
    daemon = parts.daemon
    req = await read_request(request, FeedbackRequest, daemon.settings.max_request_bytes)
    return await daemon.completions.feedback(req, user)


@router.get("/v1/cache/stats")
async def cache_stats(user: LimitedUser, parts: ServedParts) -> dict[str, Any]:
    runtime = parts.daemon.runtime
    stats: dict[str, Any] = await runtime.run_db(runtime.cache.stats)
    stats["status"] = runtime.cache.status
    return stats


@router.post("/v1/cache/clear")
async def cache_clear(user: LimitedUser, parts: ServedParts) -> dict[str, Any]:
    runtime = parts.daemon.runtime
    removed = await runtime.run_db(runtime.cache.clear)
    return {"removed": removed}
