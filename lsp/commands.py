"""The ``assist.fixFile`` command: repair the whole file, with progress, and apply the fix.
``assist.feedback``, the report on a shown answer, belongs to ``lsp.completion``.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from lsp.fixes import apply, run_fix
from lsp.server import AssistServer

log = logging.getLogger(__name__)

FIX_FILE_COMMAND = "assist.fixFile"


def register(server: AssistServer) -> None:
    @server.command(FIX_FILE_COMMAND)
    async def fix_file(ls: AssistServer, *args: Any) -> dict[str, object]:
        uri = args[0] if args else None
        if isinstance(uri, dict):
            uri = uri.get("uri")
        if not isinstance(uri, str):
            return {"changed": False, "verified": False, "message": "assist.fixFile needs a uri"}
        token = f"assist-fix-{uuid.uuid4().hex[:8]}"
        progress: str | None = None
        window = ls.client_capabilities.window
        if window is not None and window.work_done_progress:
            try:
                await ls.work_done_progress.create_async(token)
                progress = token
            except Exception as exc:  # progress is a nicety: fix without it
                log.info("work done progress unavailable: %s", exc)
        outcome = await apply(ls, await run_fix(ls, uri, progress))
        # The editor shows the returned message (one message, its own severity).
        log.info("%s", outcome.message)
        return outcome.as_json()
