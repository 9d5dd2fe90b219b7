"""The router: fast for a line or a short block, deep for a whole body, budgets from settings."""

from __future__ import annotations

import pytest

from daemon.answers.route import decide_route, empty_body_at
from daemon.cursor import Cursor
from daemon.settings import load_settings

SETTINGS = load_settings()


def route(text: str, language: str, **kw):
    lines = text.split("\n")
    return decide_route(
        SETTINGS, Cursor.locate(text, len(lines) - 1, len(lines[-1])), language, **kw
    )


def test_empty_python_body_after_a_signature_is_deep():
    r = route("def total(items: list[int]) -> int:\n    ", "python")
    assert r.kind == "deep" and "body" in r.reason
    assert r.max_tokens == SETTINGS.deep_max_tokens
    assert r.stages == ("skeleton", "logic", "errors", "final")
    assert r.body_indent == "    "


def test_empty_body_after_a_docstring_is_deep():
    text = 'def load(path):\n    """Read the file."""\n    '
    assert route(text, "python").kind == "deep"


def test_cursor_at_column_zero_under_a_signature_is_deep_with_the_body_indent():
    assert (
        empty_body_at(Cursor.locate("class A:\n    def f(self):\n", 2, 0), "python") == "        "
    )


def test_a_body_that_already_has_code_below_is_not_deep():
    text = "def f():\n    \n    return 1\n"
    assert empty_body_at(Cursor.locate(text, 1, 4), "python") is None


def test_mid_line_and_partial_statements_are_fast():
    assert route("x = compute(", "python").kind == "fast"
    text = "def f():\n    return g("
    r = route(text, "python")
    assert r.kind == "fast" and "statement" in r.reason
    assert r.stages == ("skeleton", "logic", "final")
    lines = ["total = sum(values)  # done"]
    mid = decide_route(SETTINGS, Cursor.locate(lines[0], 0, 5), "python")
    assert mid.kind == "fast" and "inside a line" in mid.reason
    text = "x = call(\n    first,\n    second(\n)\n"
    inside = decide_route(SETTINGS, Cursor.locate(text, 2, 11), "python")
    assert inside.kind == "fast" and inside.shape.kind == "line"
    assert "brackets the code below goes on with" in inside.reason


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("function add(a, b) {\n  \n}", "javascript"),
        ("func Add(a, b int) int {\n\t\n}", "go"),
        ("fn add(a: i32, b: i32) -> i32 {\n    \n}", "rust"),
    ],
)
def test_empty_brace_bodies_are_deep(text, language):
    lines = text.split("\n")
    r = decide_route(SETTINGS, Cursor.locate(text, 1, len(lines[1])), language)
    assert r.kind == "deep"


def test_the_request_can_force_a_path_and_its_budget():
    r = route("x = 1\n", "python", mode="deep", max_tokens=7, deadline_ms=500)
    assert r.kind == "deep" and r.max_tokens == 7 and r.deadline_ms == 500
    r = route("def f():\n    ", "python", mode="fast")
    assert r.kind == "fast" and "asked" in r.reason
