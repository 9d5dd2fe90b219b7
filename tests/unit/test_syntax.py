"""Syntax diagnostics from the real parsers: CPython's compiler and the tree-sitter grammars,
on the corpus of broken files in tests/data/broken and on edge cases."""

from __future__ import annotations

import difflib
import threading
from pathlib import Path

import pytest

from daemon.checks.syntax import (
    MAX_DIAGNOSTICS,
    Diagnostic,
    UnsupportedLanguage,
    check_syntax,
    parses,
    python_cut_error,
    supported_languages,
)

DATA = Path(__file__).resolve().parents[1] / "data"
BROKEN = DATA / "broken"
FIXED = DATA / "fixed"
LANGUAGES = {
    "python": ".py",
    "javascript": ".js",
    "typescript": ".ts",
    "go": ".go",
    "rust": ".rs",
    "java": ".java",
    "c": ".c",
    "cpp": ".cpp",
}

# Where each corpus file's syntax errors are: the 0-based line of each fix, where the broken
# file differs from its fixed twin. A file with several errors (named two_errors_*, three_errors_*)
# has a tuple of lines, in file order.
ERROR_LINES: dict[str, dict[str, int | tuple[int, ...]]] = {
    "python": {
        "assign_in_condition.py": 13,
        "bad_indentation_block.py": 9,
        "dedented_return_method.py": 21,
        "else_if.py": 11,
        "missing_colon_class.py": 14,
        "missing_colon_def.py": 7,
        "missing_colon_for.py": 24,
        "missing_comma_args_lines.py": 21,
        "missing_comma_dict_lines.py": 12,
        "missing_comma_list_lines.py": 15,
        "overindented_line.py": 24,
        "print_statement.py": 22,
        "print_statement_name.py": 33,
        "stray_bracket_dict.py": 29,
        "stray_colon_line.py": 25,
        "stray_paren_assign.py": 23,
        "three_errors_comma_indent_colon.py": (10, 17, 28),
        "two_errors_colon_paren.py": (13, 27),
        "two_errors_elif_print.py": (10, 32),
        "two_errors_string_assign.py": (8, 25),
        "unclosed_brace_dict.py": 24,
        "unclosed_paren_call.py": 31,
        "unclosed_paren_call_line.py": 22,
        "unclosed_paren_call_lines.py": 17,
        "unclosed_paren_nested.py": 25,
        "unindent_mismatch.py": 35,
        "unterminated_fstring.py": 25,
        "unterminated_string.py": 4,
    },
    "javascript": {
        "missing_brace_for_middle.js": 24,
        "missing_brace_if.js": 21,
        "missing_colon_object.js": 8,
        "missing_comma_array_lines.js": 4,
        "missing_comma_object_lines.js": 6,
        "missing_semicolon_for.js": 12,
        "stray_paren_if.js": 16,
        "stray_paren_line_end.js": 18,
        "two_errors_brace_paren.js": (12, 23),
        "two_errors_comma_paren.js": (6, 19),
        "unclosed_brace_object.js": 6,
        "unclosed_bracket_array.js": 12,
        "unclosed_paren_call.js": 31,
        "unclosed_paren_call_line.js": 22,
        "unclosed_paren_call_lines.js": 23,
        "unterminated_string.js": 3,
        "unterminated_template.js": 18,
    },
    "typescript": {
        "missing_brace_for_middle.ts": 29,
        "missing_brace_method.ts": 26,
        "missing_colon_interface.ts": 3,
        "missing_comma_args_lines.ts": 21,
        "missing_comma_enum_lines.ts": 2,
        "missing_comma_object.ts": 10,
        "missing_semicolon_type_literal.ts": 0,
        "stray_colon_param.ts": 16,
        "stray_paren_line_end.ts": 11,
        "three_errors_template_paren_semicolon.ts": (11, 17, 19),
        "two_errors_comma_brace.ts": (8, 20),
        "unclosed_brace_object.ts": 16,
        "unclosed_bracket_index.ts": 9,
        "unclosed_paren_call_line.ts": 12,
        "unclosed_paren_call_lines.ts": 21,
        "unclosed_paren_condition.ts": 11,
        "unclosed_paren_nested.ts": 19,
        "unterminated_string.ts": 9,
        "unterminated_template.ts": 11,
    },
    "go": {
        "assign_in_condition.go": 15,
        "missing_brace_for_middle.go": 20,
        "missing_brace_if.go": 23,
        "missing_colon_case.go": 12,
        "missing_comma_args_lines.go": 18,
        "missing_comma_slice_lines.go": 11,
        "missing_paren_func.go": 28,
        "missing_semicolon_for.go": 23,
        "stray_comma_struct.go": 9,
        "stray_paren_line_end.go": 24,
        "two_errors_comma_assign.go": (15, 29),
        "two_errors_paren_string.go": (14, 34),
        "unclosed_brace_map.go": 15,
        "unclosed_paren_call.go": 31,
        "unclosed_paren_call_line.go": 24,
        "unclosed_paren_call_lines.go": 32,
        "unterminated_string.go": 9,
    },
    "rust": {
        "missing_brace_for_middle.rs": 20,
        "missing_brace_impl.rs": 26,
        "missing_colon_struct_field.rs": 4,
        "missing_comma_args_lines.rs": 19,
        "missing_comma_match.rs": 17,
        "missing_comma_struct_lines.rs": 15,
        "missing_semicolon_let.rs": 26,
        "stray_paren_line_end.rs": 20,
        "stray_semicolon_struct.rs": 4,
        "two_errors_comma_string.rs": (14, 30),
        "two_errors_semicolon_paren.rs": (13, 18),
        "unclosed_brace_struct_literal.rs": 24,
        "unclosed_paren_call.rs": 20,
        "unclosed_paren_call_line.rs": 22,
        "unclosed_paren_call_lines.rs": 26,
        "unterminated_string.rs": 35,
    },
    "java": {
        "missing_brace_for_middle.java": 26,
        "missing_brace_method.java": 21,
        "missing_colon_case.java": 7,
        "missing_comma_args_lines.java": 19,
        "missing_comma_array_lines.java": 5,
        "missing_semicolon_statement.java": 8,
        "stray_paren_if.java": 12,
        "stray_paren_line_end.java": 13,
        "two_errors_brace_paren.java": (12, 25),
        "two_errors_semicolon_paren.java": (9, 27),
        "unclosed_brace_array.java": 8,
        "unclosed_paren_call_line.java": 10,
        "unclosed_paren_call_lines.java": 23,
        "unclosed_paren_nested.java": 29,
        "unterminated_string.java": 12,
    },
    "c": {
        "missing_brace_for_middle.c": 14,
        "missing_colon_case.c": 8,
        "missing_comma_array_lines.c": 11,
        "missing_semicolon_statement.c": 18,
        "missing_semicolon_struct.c": 6,
        "stray_paren_line_end.c": 14,
        "two_errors_comma_string.c": (4, 28),
        "two_errors_semicolon_brace.c": (7, 25),
        "unclosed_brace_initializer.c": 13,
        "unclosed_paren_call_line.c": 19,
        "unclosed_paren_call_lines.c": 18,
        "unclosed_paren_nested.c": 11,
        "unterminated_string.c": 23,
    },
    "cpp": {
        "missing_brace_for_middle.cpp": 12,
        "missing_brace_method.cpp": 8,
        "missing_colon_access.cpp": 20,
        "missing_comma_init_lines.cpp": 6,
        "missing_semicolon_class.cpp": 17,
        "stray_paren_line_end.cpp": 20,
        "two_errors_comma_semicolon.cpp": (28, 33),
        "two_errors_semicolon_paren.cpp": (10, 34),
        "unclosed_brace_init.cpp": 13,
        "unclosed_paren_call_line.cpp": 25,
        "unclosed_paren_call_lines.cpp": 24,
        "unclosed_paren_nested.cpp": 24,
        "unterminated_string.cpp": 11,
    },
}

CORPUS = [(lang, name) for lang, files in sorted(ERROR_LINES.items()) for name in sorted(files)]


def error_lines(language: str, name: str) -> tuple[int, ...]:
    """The lines of a corpus file's errors, first to last."""
    lines = ERROR_LINES[language][name]
    return lines if isinstance(lines, tuple) else (lines,)


MULTI_ERROR = [(lang, name) for lang, name in CORPUS if len(error_lines(lang, name)) > 1]

# Files where the parser's missing-token hint alone is the fix.
INSERT_FIXES = [
    ("python", "missing_colon_def.py"),
    ("python", "missing_colon_for.py"),
    ("javascript", "unclosed_paren_call.js"),
    ("javascript", "missing_semicolon_for.js"),
    ("typescript", "unclosed_paren_condition.ts"),
    ("go", "unclosed_paren_call.go"),
    ("go", "missing_paren_func.go"),
    ("rust", "missing_semicolon_let.rs"),
    ("rust", "missing_comma_match.rs"),
]


def apply_insert(text: str, diagnostic: Diagnostic) -> str:
    assert diagnostic.insert is not None
    lines = text.split("\n")
    line = lines[diagnostic.line]
    lines[diagnostic.line] = (
        line[: diagnostic.column] + diagnostic.insert + line[diagnostic.column :]
    )
    return "\n".join(lines)


# --- the corpus ---------------------------------------------------------------------------------


def test_corpus_is_complete() -> None:
    assert (BROKEN / "README.md").is_file()
    for language, suffix in LANGUAGES.items():
        broken = sorted(p.name for p in (BROKEN / language).iterdir())
        fixed = sorted(p.name for p in (FIXED / language).iterdir())
        assert broken == sorted(ERROR_LINES[language]), language
        assert fixed == broken, language
        assert len(broken) >= 5 and all(name.endswith(suffix) for name in broken)
    assert len(CORPUS) >= 80
    assert len(MULTI_ERROR) >= 10
    # A file's name says how many errors it has: two_errors_*, three_errors_*, else one.
    counts = {"two_errors_": 2, "three_errors_": 3}
    for language, name in CORPUS:
        count = next((n for prefix, n in counts.items() if name.startswith(prefix)), 1)
        assert len(error_lines(language, name)) == count, name


@pytest.mark.parametrize(("language", "name"), CORPUS)
def test_broken_file_is_diagnosed_near_its_error(language: str, name: str) -> None:
    text = (BROKEN / language / name).read_text(encoding="utf-8")
    assert 15 <= text.count("\n") <= 60
    diagnostics = check_syntax(language, text)
    assert diagnostics, "the parser accepted a broken file"
    assert not parses(language, text)
    # The first error is diagnosed; what a parser says after it depends on how it recovers.
    expected = error_lines(language, name)[0]
    lines = [d.line for d in diagnostics]
    assert any(abs(line - expected) <= 3 for line in lines), (expected, diagnostics)
    total = len(text.split("\n"))
    for d in diagnostics:
        assert 0 <= d.line <= d.end_line < total
        assert (d.line, d.column) <= (d.end_line, d.end_column)
        assert d.message and d.source in ("python", "tree-sitter")


@pytest.mark.parametrize(("language", "name"), CORPUS)
def test_fixed_file_parses_and_differs_from_the_broken_one(language: str, name: str) -> None:
    fixed = (FIXED / language / name).read_text(encoding="utf-8")
    assert check_syntax(language, fixed) == []
    assert parses(language, fixed)
    broken = (BROKEN / language / name).read_text(encoding="utf-8")
    # The versions differ in one place per error, a line or two long, at the error's line.
    matcher = difflib.SequenceMatcher(None, broken.split("\n"), fixed.split("\n"))
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    expected = error_lines(language, name)
    assert len(changes) == len(expected), changes
    for (_, start, end, fixed_start, fixed_end), line in zip(changes, expected, strict=True):
        assert start == line, (changes, expected)
        assert max(end - start, fixed_end - fixed_start) <= 2


@pytest.mark.parametrize(("language", "name"), INSERT_FIXES)
def test_missing_token_insert_is_the_fix(language: str, name: str) -> None:
    text = (BROKEN / language / name).read_text(encoding="utf-8")
    [diagnostic] = check_syntax(language, text)
    fixed = apply_insert(text, diagnostic)
    assert parses(language, fixed)
    assert fixed == (FIXED / language / name).read_text(encoding="utf-8")


# --- missing tokens -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "token"),
    [
        ("javascript", "function f(a {\n  return a;\n}\n", ")"),
        ("javascriptreact", "const A = () => <div>{f(x}</div>;\n", ")"),
        ("typescript", "if (!res.ok {\n  throw new Error('x');\n}\n", ")"),
        ("go", 'package main\n\nfunc main() {\n\tfmt.Println("ü"\n}\n', ")"),
        ("rust", "fn main() {\n    let x = 5\n    let y = 6;\n}\n", ";"),
        ("java", "class A { void f() { int x = 1 } }\n", ";"),
        ("c", "int main(void) { return 0 }\n", ";"),
        ("cpp", "int main() { int a[] = {1, 2; }\n", "}"),
        ("python", "def f(a)\n    return a\n", ":"),
    ],
)
def test_inserting_the_missing_token_makes_it_parse(language: str, text: str, token: str) -> None:
    diagnostics = check_syntax(language, text)
    hints = [d for d in diagnostics if d.insert is not None]
    assert hints, diagnostics
    assert hints[0].insert == token
    assert hints[0].message == f"missing '{token}'" or language == "python"
    assert parses(language, apply_insert(text, hints[0]))


def test_a_missing_named_node_has_no_text_to_insert() -> None:
    # "a +" lacks an expression: there is nothing literal to insert.
    [diagnostic] = check_syntax("javascript", "const x = a + ;\n")
    assert diagnostic.insert is None


# --- positions ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "line", "prefix"),
    [
        # 'é' is 2 bytes, '😀' 4 bytes (and 2 UTF-16 units): a column counts each as one.
        ("javascript", 'const s = "é😀é";\nconst t = "ü" + ;\n', 1, 'const t = "ü" '),
        (
            "typescript",
            'let a: string = "日本語"; let b: = 1;\n',
            0,
            'let a: string = "日本語"; let b',
        ),
        (
            "go",
            'package main\n\nfunc main() {\n\tfmt.Println("ñandú", "ü"\n}\n',
            3,
            '\tfmt.Println("ñandú", "ü"',
        ),
        (
            "rust",
            'fn main() { let s = "größe"; let t = s + ; }\n',
            0,
            'fn main() { let s = "größe"; let t = s +',
        ),
        ("python", 'x = "é😀é" + )\n', 0, 'x = "é😀é" + '),
        ("python", 'ü = 1\nif ü == "ö"\n    pass\n', 1, 'if ü == "ö"'),
    ],
)
def test_columns_are_code_points(language: str, text: str, line: int, prefix: str) -> None:
    """The error's column is the number of code points on its line before it."""
    assert text.split("\n")[line].startswith(prefix)
    assert len(prefix.encode()) > len(prefix)  # byte and code-point columns differ here
    diagnostics = check_syntax(language, text)
    assert (diagnostics[0].line, diagnostics[0].column) == (line, len(prefix)), diagnostics


def test_error_range_ends_in_code_points() -> None:
    [diagnostic] = check_syntax("javascript", "let a = 1;\nlet b = f(x y, 'ä');\n")
    assert diagnostic.line == diagnostic.end_line == 1
    text = "let b = f(x y, 'ä');"
    assert diagnostic.end_column <= len(text)


def test_python_positions_stay_inside_the_text() -> None:
    # CPython reports ends of -1 and 0, and lines past the end, for some errors.
    for text in ("x = [\n", "if x:\n    a = 1\n      b = 2\n", "def f(:\n", "s = '''abc\n\n"):
        [d] = check_syntax("python", text)
        lines = text.split("\n")
        assert 0 <= d.line < len(lines) and 0 <= d.column <= len(lines[d.line])
        assert (d.line, d.column) <= (d.end_line, d.end_column)
        assert d.end_line < len(lines) and d.end_column <= len(lines[d.end_line])


def test_python_kinds_of_errors() -> None:
    [colon] = check_syntax("python", "class A\n    pass\n")
    assert colon.message == "expected ':'" and colon.insert == ":"
    assert (colon.line, colon.column) == (0, 7)
    [indent] = check_syntax("python", "x = 1\n    y = 2\n")
    assert indent.message == "unexpected indent" and indent.line == 1
    [tabs] = check_syntax("python", "if x:\n\ta = 1\n        b = 2\n")
    assert "tab" in tabs.message and tabs.line == 2
    [string] = check_syntax("python", "s = 'abc\n")
    assert "unterminated string" in string.message and string.source == "python"


def test_python_parses_is_what_the_interpreter_accepts() -> None:
    assert parses("python", "match x:\n    case [a, *rest]:\n        pass\n")
    assert parses("python", "")
    assert parses("python", "s = '\\d'\n")  # an invalid escape warns, it does not fail
    assert not parses("python", "print 'x'\n")


def test_crlf_line_endings() -> None:
    assert parses("javascript", "const a = 1;\r\nconst b = 2;\r\n")
    [d] = check_syntax("javascript", "const a = 1;\r\nconst b = f(1;\r\n")
    assert d.line == 1
    [p] = check_syntax("python", "x = 1\r\ny = (\r\n")
    assert p.line == 1


def test_a_document_checked_again_gets_the_same_errors_in_a_list_of_its_own() -> None:
    """Results are kept for the next check of the same text: what one caller does with its
    list never reaches the next one, and another language is checked apart."""
    text = "const a = f(1;\n"
    first = check_syntax("javascript", text)
    first.clear()
    again = check_syntax("javascript", text)
    assert len(again) == 1 and again[0].line == 0
    assert again is not check_syntax("javascript", text)
    assert check_syntax("python", "x = 1\n") == []
    assert check_syntax("python", text)  # not JavaScript's answer for the same text


# --- languages ----------------------------------------------------------------------------------


def test_supported_languages() -> None:
    expected = {
        *("python", "javascript", "javascriptreact", "typescript", "typescriptreact"),
        *("go", "rust", "java", "c", "cpp"),
    }
    assert supported_languages() == expected


def test_jsx_and_tsx() -> None:
    assert parses("javascriptreact", "const A = () => <div className='x'>{items}</div>;\n")
    assert parses("typescriptreact", "const A = (p: {n: number}) => <b>{p.n}</b>;\n")
    # Plain TypeScript has no JSX, and the TSX grammar has no <T>x casts.
    assert not parses("typescript", "const A = () => <div>{x}</div>;\n")
    assert parses("typescript", "const n = <number>x;\n")


@pytest.mark.parametrize("language", ["cobol", "plaintext", "markdown", ""])
def test_unsupported_language(language: str) -> None:
    with pytest.raises(UnsupportedLanguage, match=f"'{language}'") as caught:
        check_syntax(language, "x")
    assert "python" in str(caught.value) and "rust" in str(caught.value)
    assert isinstance(caught.value, ValueError)
    with pytest.raises(UnsupportedLanguage):
        parses(language, "x")


def test_language_ids_are_case_insensitive() -> None:
    assert parses("Python", "x = 1\n") and parses("TypeScript", "let x = 1;\n")


# --- hostile input ------------------------------------------------------------------------------


@pytest.mark.parametrize("language", sorted(supported_languages()))
def test_hostile_input_never_crashes(language: str) -> None:
    for text in (
        "a\x00b = 1\n",
        "(" * 10_000,
        "[" * 10_000 + "]" * 10_000,
        "{" * 10_000,
        "-" * 100_000 + "1",
        "x = '\ud800'\n",  # a lone surrogate, as a JSON escape can produce
        "\ufeff\n",
        "é" * 10_000 + "(",
    ):
        diagnostics = check_syntax(language, text)
        assert len(diagnostics) <= MAX_DIAGNOSTICS
        assert parses(language, text) == (diagnostics == [])
    assert not parses(language, "(" * 10_000)


def test_python_null_byte_and_deep_nesting() -> None:
    [null] = check_syntax("python", "x = 1\ny = 'a\x00b'\n")
    assert (null.line, null.column) == (1, 6) and "null" in null.message
    [nested] = check_syntax("python", "-" * 100_000 + "1")
    assert nested.source == "python"
    [parens] = check_syntax("python", "x = " + "(" * 10_000)
    assert parens.line == 0


def test_diagnostics_are_capped() -> None:
    text = "let a = f(1;\n" * 500  # 500 independent errors
    assert len(check_syntax("javascript", text)) == MAX_DIAGNOSTICS


def test_error_messages_name_the_unexpected_text() -> None:
    [d] = check_syntax("javascript", "if (x) { y(); } } else { z(); }\n")
    assert d.message.startswith("unexpected '}")
    long = check_syntax(
        "go", "package main\n\nfunc main() { x := 1 2 3 4 5 6 7 8 9 10 11 12 13 }\n"
    )
    assert all(len(d.message) <= 60 for d in long)


def test_parsing_from_many_threads() -> None:
    texts = [
        ("javascript", f"function f{i}(a {{ return {i}; }}\n" if i % 2 else f"let a{i} = {i};\n")
        for i in range(40)
    ]
    texts += [("python", f"def f{i}(:\n" if i % 2 else f"x = {i}\n") for i in range(40)]
    expected = [check_syntax(language, text) for language, text in texts]
    results: list[list[Diagnostic] | None] = [None] * len(texts)
    errors: list[BaseException] = []

    def work(start: int) -> None:
        try:
            for _ in range(5):
                for index in range(start, len(texts), 8):
                    results[index] = check_syntax(*texts[index])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == expected


# -- Python text cut where it ends --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("import os\nfrom a import b, c,", 1, "trailing comma"),
        ("def f():\n    1. The host is not valid.", 1, "invalid syntax"),
        ("def f():\n    x = 1 +", 1, "invalid syntax"),
        ("def f():\n    else:", 1, "invalid syntax"),
    ],
)
def test_a_cut_text_with_an_error_no_later_text_mends(text, line, message):
    found = python_cut_error(text)
    assert found is not None and found.line == line and message in found.message


@pytest.mark.parametrize(
    "text",
    [
        "def f():\n    return x",  # parses
        "def f():\n    x = foo(a,",  # an open bracket
        'def f():\n    s = """abc',  # an open string
        "def f():\n    if x > 0:",  # a block to come
        "def f():\n    x = a \\",  # a line continued
        "class A:\n    @property",  # a decorator's function to come
        "x = 1\n   y = 2",  # indentation is not judged
        "def outer():\n    def inner():\n        nonlocal x",  # bound below, perhaps
        "x = '\\d'",  # an invalid escape only warns
    ],
)
def test_a_cut_text_that_parses_or_wants_more_has_no_error(text):
    assert python_cut_error(text) is None
