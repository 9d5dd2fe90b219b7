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
    supported_languages,
)

DATA = Path(__file__).resolve().parents[1] / "data"
BROKEN = DATA / "broken"
FIXED = DATA / "fixed"
LANGUAGES = {"python": ".py", "javascript": ".js", "typescript": ".ts", "go": ".go", "rust": ".rs"}

# The 0-based line of each corpus file's one syntax error: where the fix goes.
ERROR_LINES: dict[str, dict[str, int]] = {
    "python": {
        "bad_indentation_block.py": 9,
        "missing_colon_def.py": 7,
        "missing_colon_for.py": 24,
        "stray_bracket_dict.py": 29,
        "unclosed_paren_call.py": 31,
        "unindent_mismatch.py": 35,
        "unterminated_string.py": 4,
    },
    "javascript": {
        "missing_brace_if.js": 21,
        "missing_semicolon_for.js": 12,
        "stray_paren_if.js": 16,
        "unclosed_bracket_array.js": 12,
        "unclosed_paren_call.js": 31,
        "unterminated_string.js": 3,
    },
    "typescript": {
        "missing_brace_method.ts": 26,
        "missing_comma_object.ts": 10,
        "stray_colon_param.ts": 16,
        "unclosed_bracket_index.ts": 9,
        "unclosed_paren_condition.ts": 11,
        "unterminated_string.ts": 9,
    },
    "go": {
        "missing_brace_if.go": 23,
        "missing_paren_func.go": 28,
        "missing_semicolon_for.go": 23,
        "stray_comma_struct.go": 9,
        "unclosed_paren_call.go": 31,
        "unterminated_string.go": 9,
    },
    "rust": {
        "missing_brace_impl.rs": 26,
        "missing_comma_match.rs": 17,
        "missing_semicolon_let.rs": 26,
        "stray_semicolon_struct.rs": 4,
        "unclosed_paren_call.rs": 20,
        "unterminated_string.rs": 35,
    },
}
CORPUS = [(lang, name) for lang, files in sorted(ERROR_LINES.items()) for name in sorted(files)]

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
    assert len(CORPUS) >= 25


@pytest.mark.parametrize(("language", "name"), CORPUS)
def test_broken_file_is_diagnosed_near_its_error(language: str, name: str) -> None:
    text = (BROKEN / language / name).read_text(encoding="utf-8")
    assert 15 <= text.count("\n") <= 60
    diagnostics = check_syntax(language, text)
    assert diagnostics, "the parser accepted a broken file"
    assert not parses(language, text)
    expected = ERROR_LINES[language][name]
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
    # One error: the versions differ in one place, a line or two long.
    matcher = difflib.SequenceMatcher(None, broken.split("\n"), fixed.split("\n"))
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    assert len(changes) == 1, changes
    _, start, end, fixed_start, fixed_end = changes[0]
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
