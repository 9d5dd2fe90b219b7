"""Quick fixes: "Fix with assist" for syntax errors and, in Python, misspelt names."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from daemon.checks.names import misspelt_names, names_checked
from daemon.checks.syntax import Diagnostic, supported_languages
from daemon.checks.toolchain import syntax_problems
from lsp.fixes import run_fix
from lsp.server import AssistServer

log = logging.getLogger(__name__)

# Errors offered at once for one range; the fix repairs the whole file anyway.
MAX_ACTIONS = 5


def _overlaps(problem: Diagnostic, wanted: types.Range) -> bool:
    return not (problem.end_line < wanted.start.line or problem.line > wanted.end.line)


def _resolves_edits(ls: AssistServer) -> bool:
    text = ls.client_capabilities.text_document
    action = text.code_action if text else None
    support = action.resolve_support if action else None
    return bool(support and "edit" in support.properties)


Alternatives = tuple[tuple[str, types.WorkspaceEdit], ...]


# The errors come from the same parsers the daemon verifies with (run here, on the editor's text),
# and from the language's own checker where the grammar accepts what the language does not. An
# action carries an edit only once the daemon has produced a verified fix: with clients that
# resolve code actions lazily the fix runs when the user picks the action; with the others it runs
# before the action is offered, and an error with no verified fix gets no action. When the daemon
# finds two repairs about as likely that mean different things, both are offered.
def register(server: AssistServer) -> None:
    # uri -> (version, alternatives): what a lazily resolved fix found besides its edit.
    remembered: dict[str, tuple[int | None, Alternatives]] = {}

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=True
        ),
    )
    async def code_action(
        ls: AssistServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        document = ls.workspace.get_text_document(uri)
        language = document.language_id
        if language not in supported_languages():
            return None
        problems = await asyncio.to_thread(fixable_problems, language, document.source)
        wanted = [p for p in problems if _overlaps(p, params.range)][:MAX_ACTIONS]
        if not wanted:
            return None
        actions = [
            types.CodeAction(
                title=f"Fix with assist: {problem.message}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[
                    d for d in params.context.diagnostics if d.range.start.line == problem.line
                ],
                data={"uri": uri, "version": document.version},
            )
            for problem in wanted
        ]
        if _resolves_edits(ls):
            # Alternatives a resolved fix found for this very version are offered with it.
            return actions + _alternatives(*remembered.get(uri, (None, ())), document.version)
        outcome = await run_fix(ls, uri)
        if outcome.edit is None:
            return None
        for action in actions:
            action.edit = outcome.edit
        return actions + _alternatives(document.version, outcome.alternatives, document.version)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve(ls: AssistServer, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if not isinstance(uri, str):
            return action
        version = ls.workspace.get_text_document(uri).version
        outcome = await run_fix(ls, uri)
        if outcome.edit is None:
            ls.show(outcome.message, types.MessageType.Warning)
        elif outcome.alternatives:
            remembered[uri] = (version, outcome.alternatives)
            ls.show(outcome.message, types.MessageType.Info)
        action.edit = outcome.edit
        return action


def fixable_problems(language: str, text: str) -> list[Diagnostic]:
    """What a quick fix can repair: syntax errors; in a file that parses, the names its
    checker finds undefined that are one slip from a name the file has (Python with ruff,
    JavaScript and TypeScript with the TypeScript compiler installed)."""
    problems = syntax_problems(language, text)
    if not problems and names_checked(language):
        problems = misspelt_names(text, language) or []
    return problems


def _alternatives(
    found_for: int | None,
    alternatives: Alternatives,
    version: int | None,
) -> list[types.CodeAction]:
    """A quick fix per alternative repair, when they were found for the document as it is."""
    if found_for != version:
        return []
    return [
        types.CodeAction(
            title=f"Fix with assist (another reading: {rule})",
            kind=types.CodeActionKind.QuickFix,
            edit=edit,
        )
        for rule, edit in alternatives
    ]
