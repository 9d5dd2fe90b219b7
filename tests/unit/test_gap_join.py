"""Golden tests of ``join_exploded_call``: a call the answer writes one argument per line, after
the opening bracket the cursor follows, joined onto the cursor's line when it fits."""

from __future__ import annotations

import pytest

from daemon.answers.gap import gap_shape, join_exploded_call, trim_to_gap
from daemon.cursor import Cursor


def at_end(before: str, after: str = "\n") -> Cursor:
    """A cursor at the end of the line ``before`` (the file's last line of code)."""
    text = "def f(ctx, file):\n" + before + after
    return Cursor.locate(text, 1, len(before))


@pytest.mark.parametrize(
    ("before", "answer", "expected"),
    [
        # The arguments on the lines below, the closer on its own: one line, no final comma.
        (
            "    echo(",
            "\n        ctx.get_help(),\n        color=ctx.color,\n    )",
            "ctx.get_help(), color=ctx.color)",
        ),
        # The first argument on the cursor's line, the others below.
        ("    echo(", '"Usage",\n        color=ctx.color)', '"Usage", color=ctx.color)'),
        # What follows the closer on its line stays; the lines after it too.
        (
            "    if f(",
            "\n        a,\n        b,\n    ):\n        return 1",
            "a, b):\n        return 1",
        ),
        # Brackets opened and closed inside the call are joined as they are.
        ("    x = g(", "\n        h(a),\n        [1, 2],\n    )", "h(a), [1, 2])"),
        ("    x = [", "\n        1,\n        2,\n    ]", "1, 2]"),
        # Arguments typed before the cursor: the bracket still open is the call's.
        ("    echo(a, ", "\n        b,\n    )", "b)"),
        # A bare parenthesis keeps its comma: it may make a tuple.
        ("    x = (", "\n        a,\n    )", "a,)"),
    ],
)
def test_join_exploded_call(before, answer, expected):
    assert join_exploded_call(answer, at_end(before), "python") == expected


@pytest.mark.parametrize(
    ("before", "answer"),
    [
        ("    echo(", "a, b)"),  # one line already
        ("    echo(", "a, b)\n    return 1"),  # closed on the first line
        ("    echo(", "\n        a,\n        b,"),  # never closed
        ("    echo(", "\n        a,  # the first\n        b,\n    )"),  # a comment
        ("    echo(", '\n        """a\n        b""",\n    )'),  # a triple-quoted string
        ("    x = a + \\", "\n    b"),  # no bracket open at the cursor
        ("    echo(", "\n        " + "a" * 40 + ",\n        " + "b" * 40 + ",\n    )"),  # too long
    ],
)
def test_answers_left_as_written(before, answer):
    assert join_exploded_call(answer, at_end(before), "python") == answer


def test_code_after_the_cursor_on_its_line_is_left_alone():
    cursor = at_end("    echo(", "x)\n")
    assert join_exploded_call("\n        a,\n    ", cursor, "python") == "\n        a,\n    "


def test_other_languages_are_left_alone():
    text = "function f() {\n  g(\n"
    cursor = Cursor.locate(text, 1, len("  g("))
    answer = "\n    a,\n    b,\n  )"
    assert join_exploded_call(answer, cursor, "javascript") == answer


def test_the_line_length_is_the_workspace_s():
    answer = "\n        alpha,\n        beta,\n    )"
    assert join_exploded_call(answer, at_end("    echo("), "python", 20) == answer
    assert join_exploded_call(answer, at_end("    echo("), "python", 30) == "alpha, beta)"


def test_trim_to_gap_names_the_rule():
    cursor = at_end("    echo(")
    answer = "\n        ctx.get_help(),\n        color=ctx.color,\n    )"
    trimmed = trim_to_gap(answer, cursor, "python", gap_shape(cursor, "python"))
    assert trimmed.text == "ctx.get_help(), color=ctx.color)"
    assert trimmed.fired[0] == "join_exploded_call"
    assert trimmed.verdict is not None and trimmed.verdict.ok
