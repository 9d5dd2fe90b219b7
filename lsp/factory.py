"""Building the language server (``create_server``) and serving it on stdio (``main``).
Imports go one way: this module imports the server and the features, which import the server.
"""

from __future__ import annotations

import logging
import sys

from daemon.settings import Settings
from lsp import code_actions, commands, completion, lifecycle
from lsp.server import AssistServer, EditorLogHandler


def create_server(daemon_settings: Settings | None = None) -> AssistServer:
    server = AssistServer(daemon_settings)
    lifecycle.register(server)
    completion.register(server, completion.CompletionState())
    code_actions.register(server)
    commands.register(server)
    return server


def main(daemon_settings: Settings | None = None) -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server = create_server(daemon_settings)
    handler = EditorLogHandler(server)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root = logging.getLogger()
    errors = logging.StreamHandler(sys.stderr)
    errors.setLevel(logging.WARNING)
    root.handlers = [handler, errors]
    root.setLevel(logging.INFO)
    # stdout is the protocol channel: anything printed by accident goes to stderr instead.
    protocol_out = sys.stdout
    sys.stdout = sys.stderr
    server.start_io(stdin=sys.stdin.buffer, stdout=protocol_out.buffer)
