"""Golden tests of the rules on how an answer ends (``daemon.answers.gap.endings``)."""

from __future__ import annotations

import pytest

from daemon.answers.gap import drop_extra_closers, drop_stray_comma, gap_shape, trim_to_gap
from daemon.cursor import Cursor

MARK = "█"

# A call formatted one argument per line: its closing bracket is on a line of its own.
WRAPPED = """\
def check(self, value):
    self.fail(
        _("{name} {filename!r} does not exist.").format(
            name=self.name.title(), filename=format_filename(█
        ),
        value,
    )
"""


def cursor_at(document: str) -> Cursor:
    before, after = document.split(MARK)
    lines = before.split("\n")
    return Cursor.locate(before + after, len(lines) - 1, len(lines[-1]))


@pytest.mark.parametrize(
    ("document", "language", "answer", "expected"),
    [
        # The line below closes .format( itself: the answer's second closer goes.
        (WRAPPED, "python", "value))", "value)"),
        # The closing bracket after the cursor on the same line.
        ("x = f(g(█))\n", "python", "a))", "a"),
        ("print(len(█))\n", "python", "items))", "items"),
        # An answer of nothing but a closer the code below already has: nothing is left.
        ("x = f(\n    a,█\n)\n", "python", ")", ""),
        # The same slip in a language tree-sitter parses.
        ("const x = f(\n  g(█\n);\n", "javascript", "a))", "a)"),
    ],
)
def test_drop_extra_closers(document, language, answer, expected):
    assert drop_extra_closers(answer, cursor_at(document), language) == expected


@pytest.mark.parametrize(
    ("document", "language", "answer"),
    [
        (WRAPPED, "python", "value)"),  # closes only its own call
        ("x = f(█\n", "python", "a)"),  # the call ends on this line
        ("x = f(\n    g(█\n", "python", "a))"),  # it closes f( too, and nothing below does
        # The document does not parse for another reason: no cut is judged.
        ("def broken(:\n    x = f(█\n    )\n", "python", "a))"),
        ("x = f(█\n", None, "a))"),  # no parser for the language
        ("x = f(█\n", "python", "a)) + 1"),  # the answer does not end with closers
        # Closers the code after the cursor does not start with: not this rule's to cut.
        ("def f(a):\n    return █\n\nx = 1\n", "python", "a))"),
        ("x = f(g(█)]\n", "python", "a))"),
        # The code after starts with one closer; the answer has two more than it needs.
        (WRAPPED.replace("(█", "(str(█"), "python", "value))))"),
    ],
)
def test_closers_left_as_written(document, language, answer):
    assert drop_extra_closers(answer, cursor_at(document), language) == answer


@pytest.mark.parametrize(
    ("document", "answer", "expected"),
    [
        ("def f(self):\n    ctx = EvalContext(█\n    return ctx\n", "self),", "self)"),
        ("def f():\n    return make(█\n", "a),", "a)"),
        ("def f():\n    total += size(█\n", "a),", "a)"),
        ("echo(█\n", "a),", "a)"),  # an expression statement
        ("x = f(█\n", "a),  ", "a)"),
    ],
)
def test_drop_stray_comma(document, answer, expected):
    assert drop_stray_comma(answer, cursor_at(document), "python") == expected


@pytest.mark.parametrize(
    ("document", "language", "answer", "expected"),
    [
        # A comma before a line that does not go on with another item: it does not parse.
        (
            "spec = (\n    SpecifierSet(█\n    if isinstance(p, str)\n    else p\n)\n",
            "python",
            "p.spec),",
            "p.spec)",
        ),
        ("x = {k: Proxy(█\n     for k in keys}\n", "python", "k),", "k)"),
        ("let x = f(█\nlet y = 2;\n", "javascript", "a),", "a)"),
        # Where the code below goes on with another item, the comma stays.
        ("const x = [\n  f(█\n  g(b),\n];\n", "javascript", "a),", "a),"),
        ("x = [\n    f(█\n    g(b),\n]\n", "python", "a),", "a),"),
        # Nor is a comma cut when the document does not parse without it either.
        ("let x = f(█\nlet = ;\n", "javascript", "a),", "a),"),
        ("x = f(█\n", None, "a),", "a),"),
    ],
)
def test_a_comma_the_code_below_does_not_take(document, language, answer, expected):
    assert drop_stray_comma(answer, cursor_at(document), language) == expected


@pytest.mark.parametrize(
    ("document", "answer"),
    [
        ("items = [\n    f(█\n]\n", "a),"),  # an element of a list
        ("x = g(\n    f(█\n)\n", "a),"),  # an argument of a call that goes on below
        ("x = f(█\n", "a), b"),  # a tuple of two, written out
        ("x = a, f(█\n", "b),"),  # already a tuple of two
        ("x = f(█)\n", "a,"),  # a trailing comma inside the call
        ("x = f(█ + 1\n", "a),"),  # the statement goes on after the answer
        ("x = f(█\ndef (:\n", "a),"),  # the document does not parse
    ],
)
def test_commas_left_as_written(document, answer):
    assert drop_stray_comma(answer, cursor_at(document), "python") == answer


def test_the_tuple_rule_is_python_s():
    """Elsewhere a comma the document parses with stays (here JavaScript's comma operator)."""
    assert drop_stray_comma("a),", cursor_at("x = f(█\n  y;\n"), "javascript") == "a),"


def test_trim_to_gap_names_the_rules():
    cursor = cursor_at(WRAPPED)
    trimmed = trim_to_gap("value))", cursor, "python", gap_shape(cursor, "python"))
    assert trimmed.text == "value)"
    assert trimmed.fired == ("drop_extra_closers",)
    # A preview (no verification) is not parsed, so its ending is left as written.
    preview = trim_to_gap("value))", cursor, "python", gap_shape(cursor, "python"), verify=False)
    assert preview.text == "value))"
    cursor = cursor_at("def f(self):\n    ctx = EvalContext(█\n    return ctx\n")
    trimmed = trim_to_gap("self),", cursor, "python", gap_shape(cursor, "python"))
    assert trimmed.text == "self)"
    assert trimmed.fired == ("drop_stray_comma",)
