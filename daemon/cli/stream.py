"""Ask the daemon and follow its answer, as NDJSON on stdout or as the live stage view.
Used by ``complete`` and ``fix``; the daemon is started first when that is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from daemon.cli.output import EXIT_FAILED, EXIT_USAGE, console, err
from daemon.client.daemon_client import DaemonClient, DaemonError
from daemon.client.launcher import ensure_daemon
from daemon.protocol import DoneEvent, ErrorEvent, StageEvent, TokenEvent
from daemon.settings import Settings

# HTTP statuses that mean the request itself was wrong: exit status 2, like bad input.
_USAGE_STATUSES = (400, 413, 422)


def follow(events: Iterator[Any], as_json: bool, kind: str) -> DoneEvent | ErrorEvent | None:
    """Show a stream (NDJSON lines, or the live stage view on stderr); return how it ended."""
    from daemon.cli.stage_view import StageView

    with StageView(console(stderr=True), kind=kind) as view:
        for event in events:
            if as_json:
                print(event.model_dump_json(), flush=True)
            elif isinstance(event, StageEvent):
                view.stage(event)
            elif isinstance(event, TokenEvent):
                view.token(event)
            if isinstance(event, ErrorEvent):
                if not as_json:
                    err(f"{event.code}: {event.message}")
                return event
            if isinstance(event, DoneEvent):
                return event
    err("the daemon ended the stream without a result")
    return None


def ask(
    settings: Settings,
    call: Callable[[DaemonClient], Iterator[Any]],
    as_json: bool,
    kind: str,
) -> DoneEvent | int:
    """Send a request to the daemon (started if needed) and follow its stream to the end.

    Returns the final event, or the exit status when there is none.
    """
    try:
        ensure_daemon(settings)
        with DaemonClient.for_settings(settings) as client:
            done = follow(call(client), as_json, kind)
    except DaemonError as exc:
        err(str(exc))
        return EXIT_USAGE if exc.status in _USAGE_STATUSES else EXIT_FAILED
    return done if isinstance(done, DoneEvent) else EXIT_FAILED
