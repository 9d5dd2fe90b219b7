"""The shared lexer: strings and comments as each language writes them, brackets outside them,
and the gap rules and the repair rules reading the same brackets from it."""

from __future__ import annotations

import pytest

from daemon.answers.blocks import block_end
from daemon.answers.gap.calls import open_brackets, open_call
from daemon.lexer import bracket_depths, brackets, first_closer, lex
from daemon.repair.scan import scan


def texts(language: str | None, text: str) -> list[tuple[str, str]]:
    return [(token.kind, token.text) for token in lex(language, text)]


def test_words_punctuation_and_strings():
    assert texts("python", 'x = f(a, "b(")  # c)') == [
        ("word", "x"),
        ("punct", "="),
        ("word", "f"),
        ("punct", "("),
        ("word", "a"),
        ("punct", ","),
        ("string", '"b("'),
        ("punct", ")"),
    ]
    assert texts("javascript", "a => b !== c") == [
        ("word", "a"),
        ("punct", "=>"),
        ("word", "b"),
        ("punct", "!="),
        ("punct", "="),
        ("word", "c"),
    ]


def test_positions_are_zero_based_lines_and_columns():
    tokens = list(lex("c", "int f(\n    x);"))
    assert [(t.text, t.line, t.column) for t in tokens] == [
        ("int", 0, 0),
        ("f", 0, 4),
        ("(", 0, 5),
        ("x", 1, 4),
        (")", 1, 5),
        (";", 1, 6),
    ]


@pytest.mark.parametrize(
    ("language", "text", "strings"),
    [
        # Rust: ' is a char literal when one character or escape and a quote follow, else a
        # lifetime, whose brackets count.
        ("rust", "fn f<'a>(x: &'a str, c: char) { '(' }", ["'('"]),
        ("rust", r"let q = '\''; let n = '\u{1F600}';", [r"'\''", r"'\u{1F600}'"]),
        # Go's backticks: a raw string, no escapes, across lines.
        ("go", "s := `a\\`", ["`a\\`"]),
        ("go", "s := `a(\nb)` + x", ["`a(\nb)`"]),
        # JavaScript's template spans lines; C's backtick opens nothing but a string of its own.
        ("javascript", "t = `a ${b}\n(c)`;", ["`a ${b}\n(c)`"]),
        # Python's triple quotes span lines, with quotes inside.
        ("python", 'd = """a "(" b\n)"""', ['"""a "(" b\n)"""']),
        ("python", r"s = 'it\'s (' + t", [r"'it\'s ('"]),
    ],
)
def test_strings_as_each_language_writes_them(language, text, strings):
    assert [t.text for t in lex(language, text) if t.kind == "string"] == strings


def test_comments_are_dropped_in_each_language_s_own_markers():
    assert texts("python", "a  # b (") == [("word", "a")]
    assert texts("c", "a /* ( */ b // )") == [("word", "a"), ("word", "b")]
    assert texts("lua", "a -- (\nb --[[ (\n ]] c") == [("word", "a"), ("word", "b"), ("word", "c")]
    assert texts("sql", "select ( -- )") == [("word", "select"), ("punct", "(")]
    assert texts("haskell", "f (x) -- )") == [
        ("word", "f"),
        ("punct", "("),
        ("word", "x"),
        ("punct", ")"),
    ]
    # In C, # starts a preprocessor line, not a comment.
    assert texts("c", "#define F(x)")[:3] == [("punct", "#"), ("word", "define"), ("word", "F")]


def test_line_comments_are_tokens_where_asked_for():
    tokens = list(lex("python", 'x = "# no"  # yes\n# whole line', comments=True))
    found = [(t.text, t.line, t.column) for t in tokens if t.kind == "comment"]
    assert found == [("# yes", 0, 12), ("# whole line", 1, 0)]
    assert [t.text for t in lex("c", "a /* b */ // c", comments=True)] == ["a", "// c"]
    assert texts("python", "a  # b") == [("word", "a")]  # not asked for: dropped


def test_no_language_reads_as_python_and_an_unknown_one_as_c():
    assert texts(None, "a # (") == [("word", "a")]
    assert texts("no-such-language", "a // (\nb /* ) */") == [("word", "a"), ("word", "b")]


def test_an_open_string_ends_with_its_line_and_says_so():
    tokens = list(lex("python", 'x = "abc(\ny = (1)'))
    assert tokens[2].kind == "string" and tokens[2].text == '"abc(' and not tokens[2].closed
    assert [t.text for t in tokens[3:]] == ["y", "=", "(", "1", ")"]
    assert all(t.closed for t in lex("python", 'x = "abc"'))
    # A kind of string that spans lines runs to the text's end.
    template = list(lex("javascript", "a = `b(\nc"))
    assert template[-1].text == "`b(\nc" and not template[-1].closed
    triple = list(lex("python", 'a = """b\nc'))
    assert triple[-1].text == '"""b\nc' and not triple[-1].closed


def test_bracket_helpers():
    assert list(bracket_depths("f(a[1]) }", "c")) == [(1, 1), (3, 2), (5, 1), (6, 0), (8, -1)]
    assert brackets("} else {", "c") == (0, -1)
    assert brackets('x = ")" + (', "python") == (1, 0)
    assert first_closer("a, b) + c)", "python") == 4
    assert first_closer("f(a)", "python") is None


def test_the_gap_rules_and_the_repair_rules_see_the_same_brackets():
    text = "fn f<'a>(x: &'a str) -> Vec<char> {\n    vec!['(', ')']\n}\n// )"
    _, structure = scan("rust", text)
    assert not structure.unclosed and not structure.unopened
    assert [pair[0].char for pair in structure.pairs] == ["(", "[", "{"]
    assert sum(brackets(line, "rust")[0] for line in text.split("\n")) == 0


def test_calls_and_blocks_read_through_the_lexer():
    # The cursor after a call's bracket, with a bracket in a string and a comment before it.
    assert open_call('x = f("(", # )\n    ') == ("f", '"(", # )\n    ')
    assert open_brackets('x = f("(",\n    [1, ') == (2, 1)
    # A text that starts inside a string is scanned from a later line.
    assert open_call('rest of a docstring"""\ny = g(') == ("g", "")
    # A block's end: a brace inside a string does not close the block.
    until = block_end("    ", language="javascript", max_lines=None)
    assert until('a;\n    s = "}";\n    t();\n}\n') == len('a;\n    s = "}";\n    t();\n')
