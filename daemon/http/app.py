"""The HTTP app (FastAPI): the daemon's parts on its state, errors mapped, the routers included.
Every request but ``/health`` and ``/metrics`` counts against the user's rate limit."""

from __future__ import annotations

from fastapi import FastAPI

from daemon import __version__
from daemon.http import core_api, dropin_api, errors, observability
from daemon.http.assembly import Daemon
from daemon.http.dependencies import Served
from daemon.http.openapi import add_request_schemas
from daemon.tokens import TokenStore


def create_app(daemon: Daemon, tokens: TokenStore | None = None) -> FastAPI:
    """An app serving ``daemon``, to the users ``tokens`` names (anyone on loopback without)."""
    app = FastAPI(title="assist", version=__version__, docs_url=None, redoc_url=None)
    errors.install(app)
    Served.of(daemon, tokens).attach(app)
    observability.register_collectors(daemon.runtime)
    app.include_router(observability.router)
    app.include_router(core_api.router)
    app.include_router(dropin_api.router)
    add_request_schemas(app, core_api.REQUEST_BODIES)
    return app
