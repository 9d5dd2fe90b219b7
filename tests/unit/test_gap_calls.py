"""Calls fitted to their callee's signature: the signatures read from import snippets, and the
rule as a table of document (``█`` marks the cursor) + answer -> expected text."""

from __future__ import annotations

import pytest

from daemon.answers.gap import Signature, fit_call_arguments, gap_shape, signatures, trim_to_gap
from daemon.answers.gap.calls import open_call
from daemon.cursor import Cursor
from daemon.protocol import ContextSnippet
from daemon.workspace.python_outline import outline_python

MARK = "█"


def snippet(name: str, text: str, kind: str = "import") -> ContextSnippet:
    return ContextSnippet(path="pkg/mod.py", text=text, kind=kind, name=name)  # type: ignore[arg-type]


SNIPPETS = [
    snippet(
        "TokenStream",
        "class TokenStream:\n"
        '    """Tokens of a template."""\n'
        "    current: Token\n"
        "    def __init__(self, generator, name: str | None, filename: str | None) -> None:\n"
        "        ...\n"
        "    def look(self) -> Token:\n"
        "        ...\n",
    ),
    snippet(
        "format_filename",
        "def format_filename(\n"
        "    filename: str,\n"
        "    shorten: bool = False,\n"
        ") -> str:\n"
        '    """Formats a filename for display."""\n'
        "    ...\n",
    ),
    snippet(
        "echo", "def echo(message=None, file=None, *, nl: bool = True, err=False) -> None:\n    ..."
    ),
    snippet("log", "def log(level, *values, **fields):\n    ..."),
    snippet("only", "def only(a, /, b=1):\n    ..."),
]
KNOWN = signatures(SNIPPETS)


def cursor_at(document: str) -> Cursor:
    before, after = document.split(MARK)
    lines = before.split("\n")
    return Cursor.locate(before + after, len(lines) - 1, len(lines[-1]))


def test_signatures_read_from_import_snippets():
    assert KNOWN["TokenStream"] == Signature(
        positional=("generator", "name", "filename"),
        required=frozenset({"generator", "name", "filename"}),
    )
    assert KNOWN["format_filename"] == Signature(
        positional=("filename", "shorten"), required=frozenset({"filename"})
    )
    assert KNOWN["echo"].keyword_only == ("nl", "err")
    assert KNOWN["echo"].required == frozenset()
    assert KNOWN["log"].var_positional and KNOWN["log"].var_keyword
    assert KNOWN["only"].positional_only == ("a",)


def test_a_signature_read_from_a_constructor_the_outline_shows_inherited():
    source = (
        "class Base(Exception):\n"
        "    def __init__(self, message: str, lineno: int, name=None) -> None:\n"
        "        pass\n"
        "class Leaf(Base):\n"
        '    """A leaf."""\n'
    )
    text = outline_python(source).definitions["Leaf"].text
    assert signatures([snippet("Leaf", text)])["Leaf"] == Signature(
        positional=("message", "lineno", "name"), required=frozenset({"message", "lineno"})
    )


@pytest.mark.parametrize(
    ("snippets", "why"),
    [
        ([snippet("cached", "@functools.cache\ndef cached(a):\n    ...")], "decorated"),
        ([snippet("Point", "@dataclass\nclass Point:\n    x: int\n    y: int\n")], "dataclass"),
        ([snippet("Base", "class Base(Other):\n    def look(self):\n        ...")], "no __init__"),
        ([snippet("f", "def f(a):\n    ...", kind="recent")], "not an import"),
        ([snippet("f", "def g(a):\n    ...")], "another name"),
        ([snippet("f", 'def f(a):\n    """cut in the middle of')], "does not parse"),
        (
            [snippet("f", "def f(a):\n    ..."), snippet("f", "def f(a, b):\n    ...")],
            "two definitions disagree",
        ),
    ],
)
def test_signatures_not_read(snippets, why):
    assert signatures(snippets) == {}, why


@pytest.mark.parametrize(
    ("document", "answer", "expected"),
    [
        # One argument too many, from a class's __init__ (self not counted).
        (
            "def f():\n    return TokenStream(█)\n",
            "stream, name, filename, state)",
            "stream, name, filename)",
        ),
        # A keyword the callee does not have.
        ("x = format_filename(█\n", "filename, hint=hint)", "filename)"),
        # The rest of the line after the call stays.
        ("x = format_filename(█\n", "path, True, 3) + suffix", "path, True) + suffix"),
        # Keyword-only parameters given as keywords, not positionally.
        ("echo(█\n", "text, out, nl=False)", "text, out, nl=False)"),
        ("echo(█\n", "text, out, False)", "text, out)"),
        # A positional-only parameter given by keyword.
        ("only(█\n", "1, a=2)", "1)"),
        # A call that spans lines.
        (
            "x = format_filename(█\n",
            "\n    name,\n    False,\n    True,\n)",
            "\n    name,\n    False)",
        ),
        # Text before the arguments that is more than one byte a character.
        ("x = format_filename(█\n", '"é", True, 3)', '"é", True)'),
        # The cursor in the inner call: that call is the one fitted.
        ("print(format_filename(█\n", "name, True, 3), end='')", "name, True), end='')"),
        # The call closes at its own bracket; what follows it is not the call's.
        ("x = format_filename(█\n", "a, b, c))", "a, b))"),
        # Arguments typed before the cursor stay; the answer's go.
        ("x = format_filename(name, █\n", "True, 3)", "True)"),
        # Only typed arguments would be left: the call closes after them.
        ("x = format_filename(name█\n", ", hint=1)", ")"),
    ],
)
def test_fit_call_arguments(document, answer, expected):
    assert fit_call_arguments(answer, cursor_at(document), SNIPPETS, "python") == expected


@pytest.mark.parametrize(
    ("document", "answer"),
    [
        ("x = format_filename(█\n", "name, shorten=True)"),  # fits already
        ("log(█\n", "1, 2, 3, a=4)"),  # *values and **fields take anything
        ("x = format_filename(█\n", "*parts)"),  # what *parts holds is not known
        ("x = format_filename(█\n", "**options)"),
        ("x = format_filename(█\n", ")"),  # a required parameter is missing: no cut helps
        ("x = format_filename(█\n", "hint=1)"),  # dropping the keyword leaves filename out
        ("x = format_filename(a, █\n", "hint=1)"),  # a comma typed after the last argument
        ("x = self.format_filename(█\n", "a, b, c)"),  # a method, not the imported name
        ("x = unknown(█\n", "a, b, c)"),  # no signature known
        ("x = format_filename(█\n", "a, b, c"),  # the call is not closed
        ('x = "format_filename(█\n', 'a, b, c)"'),  # inside a string
        ("x = [format_filename, █\n", "a, b, c]"),  # not inside a call
    ],
)
def test_calls_left_as_written(document, answer):
    assert fit_call_arguments(answer, cursor_at(document), SNIPPETS, "python") == answer


def test_other_languages_and_no_signatures_are_left_alone():
    cursor = cursor_at("x = format_filename(█\n")
    assert fit_call_arguments("a, b, c)", cursor, SNIPPETS, "javascript") == "a, b, c)"
    assert fit_call_arguments("a, b, c)", cursor, [], "python") == "a, b, c)"


def test_open_call():
    assert open_call("def f():\n    return TokenStream(") == ("TokenStream", "")
    assert open_call("x = f(a, [1, 2], g(3), ") == ("f", "a, [1, 2], g(3), ")
    assert open_call("x = f(\n    a,\n    b") == ("f", "\n    a,\n    b")
    assert open_call("x = f(a)") is None
    assert open_call("if (") is None  # a bracket that is not a call
    assert open_call("x = (") is None


def test_trim_to_gap_names_the_rule():
    cursor = cursor_at("def f():\n    return TokenStream(█\n")
    shape = gap_shape(cursor, "python")
    trimmed = trim_to_gap(
        "stream, name, filename, state)", cursor, "python", shape, context=SNIPPETS
    )
    assert trimmed.text == "stream, name, filename)"
    assert "fit_call_arguments" in trimmed.fired
    plain = trim_to_gap("stream, name, filename, state)", cursor, "python", shape)
    assert plain.text == "stream, name, filename, state)"


def test_a_huge_line_is_not_scanned():
    data = "x = [" + "1, " * 10_000 + "]\n"
    assert open_call(data + "y = format_filename(") == ("format_filename", "")
    assert open_call("y = format_filename(" + "1, " * 10_000) is None
    cursor = cursor_at("y = format_filename(" + "1, " * 10_000 + "█\n")
    assert fit_call_arguments("2, 3)", cursor, SNIPPETS, "python") == "2, 3)"
