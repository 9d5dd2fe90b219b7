"""A misspelt name (ruff's F821, undefined name) one slip from exactly one name the file has or
the language provides: respelt by ``assist fix`` and offered as a quick fix; left alone where
it is short, used more than once, or as close to two names. Needs ruff (a dev dependency)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from daemon.checks.lint import ruff_path
from daemon.checks.names import misspelt_names, respelt
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


async def test_the_language_server_offers_a_quick_fix_for_a_misspelt_name():
    ls, _, _ = started_server()
    code_actions.register(ls)
    ls.connection = FixingDaemon(False)  # type: ignore[assignment]
    ls.workspace.put_text_document(
        types.TextDocumentItem(uri=URI, language_id="python", version=1, text=AREA)
    )
    found = await actions(ls)
    assert len(found) == 1 and "widht" in found[0].title
    ls.workspace.put_text_document(
        types.TextDocumentItem(uri=URI, language_id="python", version=2, text="x = len([])\n")
    )
    assert await actions(ls) is None
