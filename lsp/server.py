"""The language server object: what every feature shares.
It knows no feature: each lives in a module of its own, and ``lsp.factory`` registers them.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from daemon import __version__
from daemon.protocol import Health, StageEvent
from daemon.settings import Settings, load_settings
from daemon.tasks import BackgroundTasks
from lsp.connection import DaemonConnection
from lsp.options import AssistOptions, parse_options
from lsp.profiles import ProfileService

log = logging.getLogger(__name__)

STAGE_NOTIFICATION = "assist/stage"
STATUS_NOTIFICATION = "assist/status"
_LOG_TYPES = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
    logging.DEBUG: types.MessageType.Log,
}


class EditorLogHandler(logging.Handler):
    """Python logging to the editor's log (``window/logMessage``), so nothing reaches stdout
    (where nothing but protocol is ever written) or is lost."""

    def __init__(self, server: AssistServer) -> None:
        super().__init__()
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        # pygls logs every message it sends: forwarding those would send forever. And with no
        # transport yet (or any more) there is nowhere to send to.
        if record.name.startswith("pygls") or self.server.protocol.writer is None:
            return
        try:
            kind = _LOG_TYPES.get(record.levelno, types.MessageType.Log)
            params = types.LogMessageParams(type=kind, message=self.format(record))
            self.server.window_log_message(params)
        except Exception:  # logging must never break the server
            self.handleError(record)


class AssistServer(LanguageServer):
    """The pygls server with what all features share; the features register on it.

    It holds the options, the daemon connection, the workspace profiles, the background tasks,
    and the notifications the editors render (``assist/stage`` for answers in stages,
    ``assist/status`` for the daemon's state). Each feature lives in a module of its own, keeps
    its own state, and imports this one; ``lsp.factory`` builds the server and registers them."""

    def __init__(self, daemon_settings: Settings | None = None) -> None:
        super().__init__("assist", __version__)
        self.base_settings = daemon_settings or load_settings()
        self.options = AssistOptions()
        self.connection: DaemonConnection | None = None
        self.profiles = ProfileService()
        self.last_latency_ms: float | None = None
        self.tasks = BackgroundTasks("language server background task")

    # -- options and the daemon ------------------------------------------------------------
    def apply_options(self, raw: Any) -> None:
        options, problems = parse_options(raw, self.options)
        if problems:
            self.show("; ".join(problems), types.MessageType.Warning)
        level = getattr(logging, options.log_level.upper())
        logging.getLogger().setLevel(level)
        reconnect = (
            self.connection is None
            or options.daemon_url != self.options.daemon_url
            or options.token != self.options.token
            or options.ca != self.options.ca
        )
        self.options = options
        if reconnect:
            self.connect()

    def daemon_settings(self) -> Settings:
        update: dict[str, Any] = {}
        if self.options.daemon_url:
            update["url"] = self.options.daemon_url
        if self.options.token:
            update["token"] = self.options.token
        if self.options.ca:
            update["ca"] = Path(self.options.ca)
        return self.base_settings.model_copy(update=update)

    def connect(self) -> None:
        old = self.connection
        self.connection = DaemonConnection(
            self.daemon_settings(), self.options.autostart, self.status_changed, self.lost_daemon
        )
        self.connection.start()
        if old is not None:
            self.tasks.start(old.close())

    def status_changed(self, state: str, health: Health | None, message: str | None) -> None:
        self.notify_status(state, health, message)
        if state == "ready" and health is not None:
            log.info(
                "assist daemon ready at %s: %s on %s",
                self.connection.url if self.connection else "?",
                health.model,
                health.backend,
            )

    def lost_daemon(self, message: str) -> None:
        self.show(message, types.MessageType.Warning)

    # -- notifications ---------------------------------------------------------------------
    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def notify_status(
        self, state: str, health: Health | None = None, message: str | None = None
    ) -> None:
        health = health or (self.connection.health if self.connection else None)
        self.protocol.notify(
            STATUS_NOTIFICATION,
            {
                "state": state,
                "daemonUrl": self.daemon_settings().daemon_url,
                "model": health.model if health else None,
                "backend": health.backend if health else None,
                "lastLatencyMs": self.last_latency_ms,
                "message": message,
            },
        )

    def record_latency(self, total_ms: float) -> None:
        self.last_latency_ms = round(total_ms, 1)
        if self.connection is not None:
            self.notify_status(self.connection.state)

    def notify_stage(self, request_id: str, uri: str, kind: str, event: StageEvent) -> None:
        if not self.options.stage_notifications:
            return
        self.protocol.notify(
            STAGE_NOTIFICATION,
            {
                "requestId": request_id,
                "uri": uri,
                "kind": kind,
                "stage": event.stage,
                "text": event.text,
                "elapsedMs": event.elapsed_ms,
                "ok": event.ok,
                "reason": event.reason,
            },
        )

    # -- documents -------------------------------------------------------------------------
    def folders(self) -> list[Path]:
        found: list[Path] = []
        for folder in self.workspace.folders.values():
            path = to_fs_path(folder.uri)
            if path:
                found.append(Path(path))
        root = self.workspace.root_path
        if not found and root:
            found.append(Path(root))
        return found
