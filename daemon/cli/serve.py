"""``assist serve``: run the daemon in the foreground until interrupted.

The one place the command line reaches the server side: ``daemon.http.serve`` is imported when
the command runs, so that no other command loads the server, the engine or the model.
"""

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
