"""Golden tests of ``drop_trailing_comments``: the comments an answer writes after its code."""

from __future__ import annotations

import pytest

from daemon.answers.gap import drop_trailing_comments, gap_shape, trim_to_gap
from daemon.cursor import Cursor

BODY = "def f():\n    x = 1\n    \n    return x\n"


def at_body(answer: str, language: str = "python", text: str = BODY, line: int = 2) -> str:
    cursor = Cursor.locate(text, line, len(text.split("\n")[line]))
    return drop_trailing_comments(answer, cursor, language)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # watchdog/observers/winapi.py: the author's line, and a comment of the model's own.
        (
            "self._buf_queue.put((buf, self._extended))  # indicates that this thread has ended",
            "self._buf_queue.put((buf, self._extended))",
        ),
        ("y = f(x)  # type: ignore[arg-type]", "y = f(x)"),
        # Every line of the answer; a line that is only a comment stays.
        ("# the sum\ny = a + b  # add\nreturn y", "# the sum\ny = a + b\nreturn y"),
        # A marker inside a string is no comment.
        ('y = "#"  # hash', 'y = "#"'),
        ('y = """\n# inside\n"""  # after', 'y = """\n# inside\n"""'),
    ],
)
def test_comments_after_code_are_dropped(answer, expected):
    assert at_body(answer) == expected


def test_each_language_s_own_marker():
    text = "function f() {\n  \n}\n"
    assert at_body("return a + b; // the sum", "javascript", text, 1) == "return a + b;"
    assert at_body("return a # b;", "javascript", text, 1) == "return a # b;"


def test_a_comment_begun_before_the_cursor_is_the_programmer_s():
    text = "x = 1  # the count of \n"
    assert at_body("items  # more", text=text, line=0) == "items  # more"


def test_the_rest_of_a_line_typed_before_the_cursor():
    text = 'call("a", \n'
    assert at_body('"b")  # two', text=text, line=0) == '"b")'
    # Only a comment after the code typed: the line keeps what was typed.
    assert at_body("  # done\ny = 2", text="x = f(a)\n", line=0) == "\ny = 2"


def test_inside_a_string_the_answer_is_left_as_written():
    text = 'def f():\n    """Count them.\n    \n    """\n'
    assert at_body("Returns x  # of items", text=text, line=2) == "Returns x  # of items"


def test_a_language_without_line_comments_is_left_as_written():
    text = "a {\n  \n}\n"
    assert at_body("color: red; # x", "css", text, 1) == "color: red; # x"


def test_trim_to_gap_names_the_rule():
    cursor = Cursor.locate(BODY, 2, 4)
    trimmed = trim_to_gap("y = x + 1  # next", cursor, "python", gap_shape(cursor, "python"))
    assert trimmed.text == "y = x + 1"
    assert "drop_trailing_comments" in trimmed.fired
