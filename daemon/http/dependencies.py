"""The FastAPI dependencies of the endpoints: the daemon's parts, the user, the rate limit.
The daemon's parts are kept on the app's state."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, FastAPI, Request

from daemon.errors import RateLimited, Unauthorized
from daemon.http.assembly import Daemon
from daemon.http.rate_limit import RateLimiter
from daemon.tasks import BackgroundTasks
from daemon.tokens import LOCAL_USER, TokenStore

log = logging.getLogger(__name__)


@dataclass
class Served:
    """What an app serves: the daemon, who may use it and how often, and the drop-in answers
    read on after their client's time limit cut them (to be cached)."""

    daemon: Daemon
    tokens: TokenStore | None
    limiter: RateLimiter
    finishing: BackgroundTasks

    @classmethod
    def of(cls, daemon: Daemon, tokens: TokenStore | None) -> Served:
        settings = daemon.settings
        limiter = RateLimiter(settings.rate_limit_per_minute, settings.rate_limit_burst)
        finishing = BackgroundTasks("a drop-in answer read after its client's time limit")
        return cls(daemon, tokens, limiter, finishing)

    def attach(self, app: FastAPI) -> None:
        app.state.served = self


async def served(request: Request) -> Served:
    """The parts the app that took ``request`` serves (``Served.attach``). A coroutine, as
    every dependency here: FastAPI runs a plain function in a thread pool, a hop per request."""
    found: Served = request.app.state.served
    return found


ServedParts = Annotated[Served, Depends(served)]


async def identify(request: Request, parts: ServedParts) -> str:
    """The user behind a request: from its token when the daemon has tokens."""
    if parts.tokens is None:
        claimed = request.headers.get("x-assist-user", LOCAL_USER)
        return claimed if claimed and len(claimed) <= 64 else LOCAL_USER
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    found = parts.tokens.user_for(token.strip()) if scheme.lower() == "bearer" else None
    if found is None:
        client = request.client.host if request.client else "unknown"
        log.warning(
            "refused %s %s from %s: %s",
            request.method,
            request.url.path,
            client,
            "no token" if not header else "unknown token",
        )
        raise Unauthorized("this daemon needs a valid token (Authorization: Bearer)")
    return found


async def authenticate(parts: ServedParts, user: str = Depends(identify)) -> str:
    """The user, once the request fits their rate limit."""
    wait = parts.limiter.take(user)
    if wait > 0:
        per_minute = parts.daemon.settings.rate_limit_per_minute
        raise RateLimited(
            f"{user} sent more than {per_minute} requests a minute",
            retry_after=max(1, round(wait)),
        )
    return user


# The user behind a request (``/health`` and ``/metrics``: never rate-limited), and a user whose
# request counts against their rate limit (every other endpoint).
User = Annotated[str, Depends(identify)]
LimitedUser = Annotated[str, Depends(authenticate)]
