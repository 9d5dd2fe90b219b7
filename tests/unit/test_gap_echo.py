"""Golden tests of ``drop_call_echo``: an answer that writes again the call the cursor is in."""

from __future__ import annotations

import pytest

from daemon.answers.gap import drop_call_echo, gap_shape, trim_to_gap
from daemon.cursor import Cursor


@pytest.mark.parametrize(
    ("before", "answer", "expected"),
    [
        ("        raise TemplateNotFound(", "TemplateNotFound(template))", "template)"),
        # What follows the echoed call on the line stays.
        ("    x = to_bytes(", "to_bytes(name)) + b':'", "name) + b':'"),
        ("    if not isatty(", "isatty(stdout)):", "stdout):"),
        # The echo of a longer tail of the line: `await` and an attribute's owner.
        ("    return await auto_aiter(", "await auto_aiter(seq))", "seq)"),
        ("    n = self.width(", "self.width(line))", "line)"),
        ("    n = self.width(", "width(line))", "line)"),
        # Brackets and strings inside the echoed call are skipped over.
        ("    echo(", 'echo(f"{a(b)}", x[1]))', 'f"{a(b)}", x[1])'),
        ("    echo(", "echo(')'))", "')')"),
        # A string literal's method: the literal is echoed with it.
        ('    self.transport.write(b"".join(', 'b"".join(output)))', "output))"),
        ('    s = ", ".join(', '", ".join(names)', "names"),
        ('    s = ", ".join(', "join(names)", "names"),
    ],
)
def test_drop_call_echo(before, answer, expected):
    assert drop_call_echo(answer, before, "python") == expected


@pytest.mark.parametrize(
    ("before", "answer"),
    [
        ("    x = f(", "g(a))"),  # another function
        ("    x = f(", "ff(a))"),  # a longer name that starts the same
        ("    x = f(a, ", "f(b))"),  # arguments typed: not at the bracket
        ("    x = f(", "f(a, b"),  # the echo is not closed on the line
        ("    x = f(", "f(a,\n    b))"),
        ("    x = [", "[1]]"),  # not a call
        ("    x = f(", "a)"),
        ("    x = self.f(", "elf.f(a))"),  # not from a name's start
        ('    s = ", ".join(', '"-".join(names))'),  # another literal's method
        ('    s = ", ".join(', ' ".join(names))'),  # not from the literal's start
    ],
)
def test_answers_left_as_written(before, answer):
    assert drop_call_echo(answer, before, "python") == answer


def test_trim_to_gap_names_the_rule():
    text = "def f(template):\n    raise TemplateNotFound(\n"
    cursor = Cursor.locate(text, 1, len("    raise TemplateNotFound("))
    trimmed = trim_to_gap(
        "TemplateNotFound(template))", cursor, "python", gap_shape(cursor, "python")
    )
    assert trimmed.text == "template)"
    assert trimmed.fired[0] == "drop_call_echo"
