"""Typed errors map to statuses in one place; anything unexpected is a 500 ErrorBody with the
request's id and a logged traceback, never a plain-text page."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi import FastAPI, Request

from daemon.errors import AssistError, Busy
from daemon.http import errors
from daemon.protocol import ErrorBody, ErrorCode


def app_that(raises: Exception) -> FastAPI:
    app = FastAPI()
    errors.install(app)

    @app.get("/boom")
    async def boom() -> dict[str, str]:
        raise raises

    return app


async def get(app: FastAPI, path: str, **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.get(path, headers=headers)


def test_every_error_code_has_a_status():
    assert set(errors.STATUS) == set(ErrorCode)
    typed = {cls.code for cls in AssistError.__subclasses__()}
    assert typed <= set(errors.STATUS)


async def test_a_typed_error_is_its_status_and_body():
    response = await get(app_that(Busy("the model is busy", retry_after=3)), "/boom")
    assert response.status_code == 429 and response.headers["retry-after"] == "3"
    body = ErrorBody.model_validate(response.json())
    assert body.error.code == ErrorCode.BUSY and body.error.message == "the model is busy"
    assert body.error.request_id == response.headers["x-request-id"]


async def test_an_unexpected_exception_is_a_500_error_body_with_the_request_id(caplog):
    with caplog.at_level(logging.ERROR, logger="daemon.http.errors"):
        response = await get(app_that(KeyError("surprise")), "/boom", **{"X-Request-Id": "r-42"})
    assert response.status_code == 500
    body = ErrorBody.model_validate(response.json())
    assert body.error.code == ErrorCode.INTERNAL and body.error.request_id == "r-42"
    assert "r-42" in body.error.message
    assert any("r-42" in r.getMessage() and r.exc_info for r in caplog.records)


@pytest.mark.parametrize(("path", "method", "status"), [("/nowhere", "GET", 404)])
async def test_unknown_paths_are_error_bodies(path, method, status):
    response = await get(app_that(KeyError()), path)
    assert response.status_code == status
    assert ErrorBody.model_validate(response.json()).error.code == ErrorCode.NOT_FOUND


async def test_a_client_gone_before_its_body_is_read_is_no_error(caplog):
    app = FastAPI()
    errors.install(app)
    ran = []

    @app.post("/read")
    async def read(request: Request) -> dict[str, int]:
        ran.append(True)
        return {"length": len(await request.body())}

    messages = [
        {"type": "http.request", "body": b'{"text": "x', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict] = []

    async def receive() -> dict:
        return messages.pop(0)

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "path": "/read",
        "raw_path": b"/read",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8765),
        "scheme": "http",
        "root_path": "",
    }
    with caplog.at_level(logging.INFO, logger="daemon.http.errors"):
        await app(scope, receive, send)
    assert ran  # the endpoint was reached and its read found the client gone
    assert not any(r.levelno >= logging.WARNING for r in caplog.records)
    assert any("went away" in r.getMessage() for r in caplog.records)
    assert not sent  # nothing is sent to a client that is gone
