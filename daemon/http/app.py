"""The HTTP API (FastAPI): the daemon's parts on the app's state, typed errors mapped to
statuses, and the routers of each surface.

The daemon's own API (``daemon.http.core_api``), the drop-in protocols of llama.cpp's server and
OpenAI's API (``daemon.http.dropin_api``), and the observability endpoints
(``daemon.http.observability``). Handlers parse and hand over: the pipelines decide, typed
errors become statuses in ``daemon.http.errors``. Every request but ``/health`` and
``/metrics`` counts against the user's rate limit; with tokens, every one needs a token
(``daemon.http.dependencies``).
"""

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
    observability.count_backends(daemon.runtime)
    app.include_router(observability.router)
    app.include_router(core_api.router)
    app.include_router(dropin_api.router)
    add_request_schemas(app, core_api.REQUEST_BODIES)
    return app
