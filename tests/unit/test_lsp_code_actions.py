"""Quick fixes from the language server against a scripted daemon: a verified fix becomes the
action's edit, and two repairs about as likely are both offered (the daemon connection is the
only seam)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from lsprotocol import types

from daemon.protocol import Alternative, DoneEvent, RepairStep, Timings
from lsp import code_actions
from lsp.server import AssistServer
from tests.unit.test_lsp_completion import URI, FakeDaemon, started_server

BROKEN = "total = add(sub(1, 2)\nprint(total)\n"
ONE = "total = add(sub(1, 2))\nprint(total)\n"
OTHER = "total = add(sub(1), 2)\nprint(total)\n"


class FixingDaemon(FakeDaemon):
    """Answers a fix with ``ONE``, and ``OTHER`` as an equally likely alternative."""

    def __init__(self, alternatives: bool) -> None:
        super().__init__()
        self.alternatives = alternatives

    async def stream(self, path: str, body: dict[str, Any]) -> AsyncIterator[Any]:
        self.requests.append(body)
        yield DoneEvent(
            request_id=body["request_id"],
            text=ONE,
            cached=False,
            finish_reason="stop",
            timings=Timings(total_ms=1.0),
            changed=True,
            verified=True,
            diff="-",
            repairs=[RepairStep(line=0, message="'(' was never closed", rule="a", candidates=2)],
            alternatives=[Alternative(text=OTHER, diff="-", rule="b")] if self.alternatives else [],
        )


def server(alternatives: bool, lazy: bool) -> tuple[AssistServer, FixingDaemon]:
    ls, _, _ = started_server()
    code_actions.register(ls)
    daemon = FixingDaemon(alternatives)
    ls.connection = daemon  # type: ignore[assignment]
    if lazy:
        ls.protocol.client_capabilities = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                code_action=types.CodeActionClientCapabilities(
                    resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"])
                )
            )
        )
    ls.workspace.put_text_document(
        types.TextDocumentItem(uri=URI, language_id="python", version=3, text=BROKEN)
    )
    return ls, daemon


async def actions(ls: AssistServer) -> list[types.CodeAction]:
    handler = ls.protocol.fm.features[types.TEXT_DOCUMENT_CODE_ACTION]
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        range=types.Range(start=types.Position(0, 0), end=types.Position(1, 0)),
        context=types.CodeActionContext(diagnostics=[]),
    )
    result: list[types.CodeAction] = await handler(params)
    return result


def new_text(action: types.CodeAction) -> str:
    assert action.edit is not None and action.edit.document_changes
    change = action.edit.document_changes[0]
    assert isinstance(change, types.TextDocumentEdit)
    edit = change.edits[0]
    assert isinstance(edit, types.TextEdit)
    return edit.new_text


async def test_one_repair_is_one_action_with_its_edit():
    ls, _ = server(alternatives=False, lazy=False)
    found = await actions(ls)
    assert len(found) == 1 and "sub(1, 2))" in new_text(found[0])


async def test_two_likely_repairs_are_both_offered():
    ls, _ = server(alternatives=True, lazy=False)
    found = await actions(ls)
    assert len(found) == 2
    assert "another reading: b" in found[1].title
    assert "sub(1, 2))" in new_text(found[0]) and "sub(1), 2)" in new_text(found[1])


async def test_a_lazily_resolved_fix_offers_its_alternative_next_time():
    ls, daemon = server(alternatives=True, lazy=True)
    first = await actions(ls)
    assert len(first) == 1 and first[0].edit is None and daemon.requests == []
    resolve = ls.protocol.fm.features[types.CODE_ACTION_RESOLVE]
    resolved = await resolve(first[0])
    assert resolved.edit is not None
    again = await actions(ls)
    assert len(again) == 2 and again[1].edit is not None


def test_a_fix_is_summed_up_in_errors_and_lines_not_diff_length():
    from daemon.protocol import DoneEvent, RepairStep, Timings
    from lsp.fixes import fixed_summary

    diff = (
        "--- a/listing.py\n+++ b/listing.py\n@@ -2,7 +2,7 @@\n \n \n def files(root):\n"
        "-    return sorted(os.listdir(root)\n+    return sorted(os.listdir(root))\n \n \n"
    )
    step = RepairStep.model_construct(rule="parser hint")
    done = DoneEvent.model_construct(diff=diff, repairs=[step], timings=Timings())
    assert fixed_summary(done) == "fixed 1 error, 1 line changed"
    two = DoneEvent.model_construct(diff=diff + "-a\n-b\n+c\n", repairs=[step, step])
    assert fixed_summary(two) == "fixed 2 errors, 3 lines changed"
