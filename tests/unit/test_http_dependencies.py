"""The endpoints' dependencies: the parts an app serves come from its state, the user from the
request (a claimed name on loopback, a token's owner with tokens), and the rate limit counts
per user on the endpoints that take it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import httpx
import pytest
from fastapi import FastAPI

from daemon.http import errors
from daemon.http.assembly import Daemon
from daemon.http.dependencies import LimitedUser, Served, ServedParts, User
from daemon.http.rate_limit import RateLimiter
from daemon.settings import load_settings
from daemon.tasks import BackgroundTasks
from daemon.tokens import TokenStore, add_user


def app_serving(tokens: TokenStore | None, per_minute: int = 60, burst: int = 2) -> FastAPI:
    """An app with the two kinds of endpoint; the daemon is only its settings (the seam)."""
    settings = load_settings(rate_limit_per_minute=per_minute, rate_limit_burst=burst)
    daemon = cast(Daemon, SimpleNamespace(settings=settings))
    app = FastAPI()
    errors.install(app)
    limiter = RateLimiter(per_minute, burst)
    Served(daemon, tokens, limiter, BackgroundTasks("test")).attach(app)

    @app.get("/open")
    async def open_(user: User, parts: ServedParts) -> dict[str, object]:
        return {"user": user, "same": parts.daemon is daemon}

    @app.get("/limited")
    async def limited(user: LimitedUser) -> dict[str, str]:
        return {"user": user}

    return app


async def get(app: FastAPI, path: str, **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.get(path, headers=headers)


async def test_the_parts_come_from_the_apps_state_and_a_loopback_user_names_itself():
    app = app_serving(None)
    assert (await get(app, "/open")).json() == {"user": "local", "same": True}
    named = await get(app, "/open", **{"X-Assist-User": "ana"})
    assert named.json()["user"] == "ana"
    too_long = await get(app, "/open", **{"X-Assist-User": "x" * 65})
    assert too_long.json()["user"] == "local"


async def test_with_tokens_the_user_is_the_tokens_owner(tmp_path):
    path = tmp_path / "tokens.toml"
    token = add_user(path, "bob")
    app = app_serving(TokenStore(path))
    owned = await get(app, "/open", Authorization=f"Bearer {token}", **{"X-Assist-User": "eve"})
    assert owned.json()["user"] == "bob"
    for headers in ({}, {"Authorization": "Bearer ast_wrong"}, {"Authorization": token}):
        refused = await get(app, "/open", **headers)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("path", ["/open", "/limited"])
async def test_only_limited_endpoints_count_against_the_rate_limit(path):
    app = app_serving(None, per_minute=1, burst=2)
    statuses = [(await get(app, path, **{"X-Assist-User": "ana"})).status_code for _ in range(3)]
    assert statuses == ([200, 200, 200] if path == "/open" else [200, 200, 429])
    other = await get(app, path, **{"X-Assist-User": "bo"})
    assert other.status_code == 200  # a bucket per user


async def test_a_rate_limited_request_says_when_to_come_back():
    app = app_serving(None, per_minute=1, burst=1)
    assert (await get(app, "/limited")).status_code == 200
    refused = await get(app, "/limited")
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
    assert refused.json()["error"]["code"] == "rate_limited"
    assert "more than 1 requests a minute" in refused.json()["error"]["message"]
