"""``assist serve``: run the daemon in the foreground until interrupted.
The only command that imports the server side (``daemon.http.serve``), when it runs."""

from __future__ import annotations

from daemon.cli.output import EXIT_FAILED, EXIT_OK, err
from daemon.settings import Settings


def run_serve(settings: Settings) -> int:
    from daemon.http.serve import ServeError, serve
    from models.resolve import ModelNotFound

    def announce(text: str) -> None:
        print(text, flush=True)

    try:
        serve(settings, announce)
    except (ServeError, ModelNotFound) as exc:
        err(str(exc))
        return EXIT_FAILED
    return EXIT_OK
