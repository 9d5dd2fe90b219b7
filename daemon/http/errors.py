"""Typed errors to HTTP statuses, in one place, and the catch-all that makes a defect a 500."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from daemon.errors import AssistError, MethodNotAllowed, NotFound
from daemon.protocol import ErrorBody, ErrorCode

log = logging.getLogger(__name__)

STATUS: dict[ErrorCode, int] = {
    ErrorCode.BAD_REQUEST: 400,
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.NO_METRICS: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.REPLACED: 409,
    ErrorCode.TOO_LARGE: 413,
    ErrorCode.INVALID_REQUEST: 422,
    ErrorCode.INVALID_POSITION: 422,
    ErrorCode.UNSUPPORTED_LANGUAGE: 422,
    ErrorCode.BUSY: 429,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.INTERNAL: 500,
    ErrorCode.ENGINE_ERROR: 500,
    ErrorCode.NOT_READY: 503,
    ErrorCode.SHUTTING_DOWN: 503,
    ErrorCode.TIMEOUT: 504,
}
REQUEST_ID_HEADER = "x-request-id"


def request_id_of(scope: Scope) -> str | None:
    state: dict[str, Any] = scope.get("state") or {}
    return state.get("request_id")


# Each ErrorCode has its status and every refusal is an ErrorBody JSON; an unexpected exception
# becomes a 500 ErrorBody with the request's id (and a log line with the traceback), never a
# plain-text page. A stream that has already started cannot change its status: it ends with one
# error event carrying the same codes (daemon.http.ndjson).
def error_response(
    code: ErrorCode,
    message: str,
    request_id: str | None = None,
    retry_after: int | None = None,
) -> JSONResponse:
    body = ErrorBody(error=ErrorBody.Detail(code=code, message=message, request_id=request_id))
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return JSONResponse(body.model_dump(mode="json"), status_code=STATUS[code], headers=headers)


def response_for(exc: AssistError, request: Request) -> JSONResponse:
    return error_response(exc.code, exc.message, request_id_of(request.scope), exc.retry_after)


class CatchAll:
    """ASGI middleware: gives every request an id (the client's ``X-Request-Id`` or a new one,
    echoed in the answer), and turns an unexpected exception into a logged 500 ``ErrorBody``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(REQUEST_ID_HEADER.encode(), b"")
        request_id = given.decode("latin-1")[:128] or uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except ClientDisconnect:
            # Not a defect: the client closed its connection before its body was read.
            log.info(
                "%s %s: the client went away before sending its whole request (request id %s)",
                scope.get("method"),
                scope.get("path"),
                request_id,
            )
        except Exception:
            log.exception(
                "%s %s failed (request id %s)", scope.get("method"), scope.get("path"), request_id
            )
            if started:
                return  # a stream ends with its own error event; nothing more can be sent
            response = error_response(
                ErrorCode.INTERNAL,
                f"the daemon failed on this request; its log has the details (request id "
                f"{request_id})",
                request_id,
            )
            await response(scope, receive, send)


def install(app: FastAPI) -> None:
    """Map typed errors, unknown paths and methods, and everything unexpected, on ``app``."""

    @app.exception_handler(AssistError)
    async def _refused(request: Request, exc: AssistError) -> JSONResponse:
        return response_for(exc, request)

    @app.exception_handler(404)
    async def _not_found(request: Request, _: Exception) -> JSONResponse:
        return response_for(NotFound(f"no such endpoint: {request.url.path}"), request)

    @app.exception_handler(405)
    async def _bad_method(request: Request, _: Exception) -> JSONResponse:
        message = f"{request.method} is not allowed on {request.url.path}"
        return response_for(MethodNotAllowed(message), request)

    app.add_middleware(CatchAll)
