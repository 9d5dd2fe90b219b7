"""A misspelt name (ruff's F821 in Python, the TypeScript compiler's "Cannot find name" in
JavaScript and TypeScript) one slip from exactly one name the file has or the language provides:
respelt by ``assist fix`` and offered as a quick fix; left alone where it is short, used more
than once, or as close to two names. Needs ruff (a dev dependency) and, for JavaScript and
TypeScript, the compiler (the VS Code extension's build installs it)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from daemon.checks.lint import ruff_path
from daemon.checks.names import misspelt_names, respelt
from daemon.checks.typescript import typescript_compiler
from daemon.repair.diagnosis import diagnose
from lsp import code_actions
from tests.unit.test_lsp_code_actions import FixingDaemon, actions
from tests.unit.test_lsp_completion import URI, started_server
from tests.unit.test_repair_rules import repaired

pytestmark = pytest.mark.skipif(ruff_path() is None, reason="ruff is not installed")

AREA = "def area(width, height):\n    return widht * height\n"


def test_a_name_one_slip_from_one_the_file_has_is_respelt():
    assert repaired("python", AREA) == AREA.replace("widht", "width")
    assert repaired("python", "def f(items):\n    return lenn(items)\n") == (
        "def f(items):\n    return len(items)\n"  # a builtin is a name the file has
    )


def test_an_undefined_name_is_a_problem_only_where_it_has_one_respelling():
    assert [(d.line, d.code) for d in diagnose("python", AREA, False, None).targets] == [
        (1, "F821")
    ]
    assert respelt("widht", AREA, "python") == "width"
    # Two names as close: which was meant is a guess.
    assert respelt("abce", "abcd = 1\nabcf = 2\nprint(abce)\n", "python") is None
    # Short, or used the same way twice: most often a name from elsewhere.
    assert respelt("sub", "print(sub(1))\n", "python") is None
    assert respelt("lenn", "lenn(1)\nlenn(2)\n", "python") is None
    # A parsing file whose undefined names have no respelling has nothing to fix.
    assert misspelt_names("print(helper(1))\n") == []
    assert not diagnose("python", "print(helper(1))\n", False, None).targets


async def quick_fixes(language: str, *texts: str) -> list[list[types.CodeAction] | None]:
    """The language server's quick fixes for each text of one document, in turn."""
    ls, _, _ = started_server()
    code_actions.register(ls)
    ls.connection = FixingDaemon(False)  # type: ignore[assignment]
    found = []
    for version, text in enumerate(texts, 1):
        item = types.TextDocumentItem(uri=URI, language_id=language, version=version, text=text)
        ls.workspace.put_text_document(item)
        found.append(await actions(ls))
    return found


async def test_the_language_server_offers_a_quick_fix_for_a_misspelt_name():
    found, none = await quick_fixes("python", AREA, "x = len([])\n")
    assert found is not None and len(found) == 1 and "widht" in found[0].title
    assert none is None


needs_typescript = pytest.mark.skipif(
    typescript_compiler() is None, reason="no TypeScript compiler (build editors/vscode first)"
)
SCALE = "function scale(value, factor) {\n  return valeu * factor;\n}\nmodule.exports = scale;\n"
TYPED = (
    "export function total(prices: number[]): number {\n"
    "  return prces.reduce((a, b) => a + b, 0);\n}\n"
)


@needs_typescript
def test_a_javascript_or_typescript_name_one_slip_away_is_respelt_by_the_type_checker():
    assert repaired("javascript", SCALE) == SCALE.replace("valeu", "value")
    assert repaired("typescript", TYPED) == TYPED.replace("prces", "prices")
    # A browser or standard global the checker suggests counts as a name the file has.
    read = "console.log(docment.title);\n"
    assert repaired("javascript", read) == read.replace("docment", "document")
    [found] = diagnose("typescript", TYPED, False, None).targets
    assert (found.line, found.column, found.code) == (1, 9, "TS2304")


@needs_typescript
def test_imports_and_node_globals_are_not_undefined_names():
    text = "import { helper } from './helper';\nconst fs = require('fs');\nhelper(fs, process);\n"
    assert misspelt_names(text, "typescript") == []
    assert misspelt_names("const a = 1;\nconsole.log(zzzz);\n", "javascript") == []


@needs_typescript
async def test_the_language_server_offers_a_quick_fix_for_a_misspelt_javascript_name():
    [found] = await quick_fixes("javascript", SCALE)
    assert found is not None and len(found) == 1 and "valeu" in found[0].title
