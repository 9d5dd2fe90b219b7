"""Running a repair for a document: the ``/v1/fix`` stream, notifications, progress, the edit.
Only a verified fix is ever given to the editor as an edit.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from daemon.client.daemon_client import DaemonError
from daemon.protocol import DoneEvent, ErrorEvent, FixRequest, StageEvent
from lsp.positions import replace_edit
from lsp.server import AssistServer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FixOutcome:
    changed: bool
    verified: bool
    message: str
    edit: types.WorkspaceEdit | None = None
    # Other repairs as likely as ``edit`` that mean something else: (title, edit), offered too.
    alternatives: tuple[tuple[str, types.WorkspaceEdit], ...] = ()

    def as_json(self) -> dict[str, object]:
        return {"changed": self.changed, "verified": self.verified, "message": self.message}


async def run_fix(ls: AssistServer, uri: str, progress: str | None = None) -> FixOutcome:
    document = ls.workspace.get_text_document(uri)
    version = document.version
    profile = await ls.profiles.profile_for(uri, document.source, document.language_id)
    request_id = uuid.uuid4().hex[:16]
    request = FixRequest(
        text=document.source,
        path=ls.profiles.display_path(uri),
        language=document.language_id,
        profile=profile,
        candidates=ls.options.fix_candidates,
        request_id=request_id,
    )
    name = ls.profiles.display_path(uri) or uri
    if progress is not None:
        ls.work_done_progress.begin(
            progress, types.WorkDoneProgressBegin(title=f"assist: fixing {name}", percentage=0)
        )
    done: DoneEvent | None = None
    percent = {"skeleton": 20, "logic": 70, "errors": 85, "final": 100}
    connection = ls.connection
    try:
        if connection is None:
            return FixOutcome(False, False, "assist is not connected to its daemon")
        body = request.model_dump(exclude_none=True)
        async for event in connection.stream("/v1/fix", body):
            if isinstance(event, StageEvent):
                ls.notify_stage(request_id, uri, "fix", event)
                if progress is not None:
                    summary = event.reason or event.text.split("\n", 1)[0]
                    ls.work_done_progress.report(
                        progress,
                        types.WorkDoneProgressReport(
                            message=f"{event.stage}: {summary}"[:120],
                            percentage=percent[event.stage],
                        ),
                    )
            elif isinstance(event, ErrorEvent):
                return FixOutcome(False, False, f"assist could not fix {name}: {event.message}")
            elif isinstance(event, DoneEvent):
                done = event
    except DaemonError as exc:
        return FixOutcome(False, False, f"assist could not fix {name}: {exc}")
    finally:
        if progress is not None:
            ls.work_done_progress.end(progress, types.WorkDoneProgressEnd())
    if done is None:
        return FixOutcome(False, False, "the daemon ended the repair without a result")
    ls.record_latency(done.timings.total_ms)
    if not done.changed:
        message = f"{name}: nothing to fix" if done.verified else f"{name}: no verified fix found"
        return FixOutcome(False, bool(done.verified), message)
    workspace_edit = _whole_document_edit(document, uri, version, done.text)
    if workspace_edit is None:
        return FixOutcome(False, True, f"{name}: nothing to fix")
    if done.alternatives:
        others = []
        for alternative in done.alternatives:
            other = _whole_document_edit(document, uri, version, alternative.text)
            if other is not None:
                others.append((alternative.rule or "repair", other))
        chosen = done.repairs[-1].rule if done.repairs else "repair"
        message = (
            f"{name}: two repairs are about as likely ({chosen}, {others[0][0] if others else ''})"
            "; both are offered as quick fixes"
        )
        return FixOutcome(True, True, message, workspace_edit, tuple(others))
    return FixOutcome(True, True, f"{name}: {fixed_summary(done)} (verified)", workspace_edit)


def fixed_summary(done: DoneEvent) -> str:
    """What a fix did, as the user counts it: errors fixed and lines changed (not the
    unified diff's length, which counts its headers and context too)."""
    diff = (done.diff or "").splitlines()
    removed = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
    added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
    changed = max(removed, added)
    errors = len(done.repairs)
    what = f"fixed {errors} error{'s' if errors != 1 else ''}" if errors else "fixed"
    return f"{what}, {changed} line{'s' if changed != 1 else ''} changed"


def _whole_document_edit(
    document: Any, uri: str, version: int | None, text: str
) -> types.WorkspaceEdit | None:
    edit = replace_edit(document, text)
    if edit is None:
        return None
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.WorkspaceEdit(
        document_changes=[types.TextDocumentEdit(text_document=identifier, edits=[edit])]
    )


async def apply(ls: AssistServer, outcome: FixOutcome) -> FixOutcome:
    """Apply a verified fix through the client; report what happened."""
    if outcome.edit is None:
        return outcome
    result = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=outcome.edit, label="assist: fix")
    )
    if not result.applied:
        reason = result.failure_reason or "the document changed meanwhile"
        return FixOutcome(False, True, f"the editor did not apply the fix ({reason})")
    return outcome
