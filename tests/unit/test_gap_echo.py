"""Golden tests of ``drop_call_echo`` and ``drop_header_echo``: an answer that writes again
the call the cursor is in, or the header of the function whose body the cursor begins."""

from __future__ import annotations

import pytest

from daemon.answers.gap import drop_call_echo, drop_header_echo, gap_shape, trim_to_gap
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


EMPTY_SEND = (
    "async def empty_receive() -> NoReturn:\n"
    '    raise RuntimeError("Receive channel has not been made available")\n'
    "\n\n"
    "async def empty_send(message: Message) -> NoReturn:\n"
    "    \n"
    "\n\n"
    "class Request:\n"
    "    pass\n"
)


def header_echo(text: str, line: int, answer: str, language: str = "python") -> str:
    cursor = Cursor.locate(text, line, len(text.split("\n")[line]))
    return drop_header_echo(
        answer, cursor.lines, cursor.line, gap_shape(cursor, language), language
    )


def test_the_header_written_again_gives_way_to_its_body():
    # starlette/requests.py: the model wrote the method's header, with `self`, over the body.
    answer = (
        "async def empty_send(self, message: Message) -> NoReturn:\n"
        '        raise RuntimeError("Send channel has not been made available")'
    )
    assert header_echo(EMPTY_SEND, 5, answer) == (
        'raise RuntimeError("Send channel has not been made available")'
    )


def test_a_function_defined_before_it_written_again_gives_way_too():
    # The same place in another run: the function above, with `self`.
    answer = (
        "async def empty_receive(self) -> NoReturn:\n"
        '        raise RuntimeError("Receive channel has not been made available")'
    )
    assert header_echo(EMPTY_SEND, 5, answer) == (
        'raise RuntimeError("Receive channel has not been made available")'
    )


def test_the_echo_s_body_keeps_its_shape_and_what_follows_it_goes():
    text = "class A:\n    def f(\n        self,\n        x,\n    ) -> int:\n        \n"
    answer = (
        "def f(self, x: int) -> int:\n"
        "            if x:\n"
        "                return 1\n"
        "\n"
        "            return 0\n"
        "        y = 2"
    )
    assert header_echo(text, 5, answer) == "if x:\n            return 1\n\n        return 0"


def test_a_header_alone_leaves_nothing():
    assert header_echo(EMPTY_SEND, 5, "async def empty_send(message):") == ""


@pytest.mark.parametrize(
    ("text", "line", "answer"),
    [
        (EMPTY_SEND, 5, "def send(message):\n        pass"),  # another name
        (EMPTY_SEND, 5, "x = 1"),
        # Not the body's first line: a statement above.
        ("def f():\n    x = 1\n    \n", 2, "def f():\n        return 1"),
        # A class's body: a method may well take a name defined above it.
        ("def f():\n    pass\n\n\nclass A:\n    \n", 5, "def f(self):\n        pass"),
        # A name defined inside another function is no sibling.
        (
            "def g():\n    def h():\n        pass\n\n\ndef f():\n    \n",
            6,
            "def h():\n        pass",
        ),
        # The header is not finished on the lines written.
        (EMPTY_SEND, 5, "async def empty_send(\n        self,"),
    ],
)
def test_other_answers_are_left_as_written(text, line, answer):
    assert header_echo(text, line, answer) == answer


def test_the_header_echo_is_a_python_rule():
    text = "function f() {\n  \n}\n"
    assert header_echo(text, 1, "def f():\n    return 1", "javascript") == (
        "def f():\n    return 1"
    )


def test_trim_to_gap_names_the_header_echo():
    cursor = Cursor.locate(EMPTY_SEND, 5, 4)
    answer = "async def empty_send(self, message):\n        raise RuntimeError('x')"
    trimmed = trim_to_gap(answer, cursor, "python", gap_shape(cursor, "python"))
    assert trimmed.text == "raise RuntimeError('x')"
    assert trimmed.fired == ("drop_header_echo",)
