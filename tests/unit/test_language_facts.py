"""One record per language: what the lexers, the skeletons, the errors stage and the workspace's
style read of a language comes from ``language_info``."""

from __future__ import annotations

from daemon.answers.blocks import body_placeholder, handling_markers
from daemon.language import known_languages, language_info, languages_of_tool
from daemon.lexer import brackets
from daemon.repair.scan import scan
from daemon.workspace import style


def info(language: str):
    found = language_info(language)
    assert found is not None
    return found


def test_strings_as_each_language_writes_them():
    assert info("python").triple_quoted and not info("javascript").triple_quoted
    assert info("typescript").backticks == "template"
    assert info("go").backticks == "raw"
    assert info("c").backticks == "none"
    assert info("rust").quotes == '"'  # ' opens a lifetime or a char
    # The gap rules' bracket count skips strings as the record says: a Rust lifetime is no
    # string, so the bracket after it counts; in Python the same quote opens one.
    assert brackets("fn f<'a>(x: &'a str) {", "rust") == (1, 0)
    assert brackets("x = 'a(' + (", "python") == (1, 0)


def test_the_repair_lexer_reads_strings_that_span_lines_where_the_language_has_them():
    text = "x = `a(\nb`\ny = (1)\n"
    _, template = scan("javascript", text)
    assert not template.unclosed and len(template.pairs) == 1
    # Go's raw strings have no escapes: the backslash does not hide the closing backtick.
    _, raw = scan("go", "s := `a\\`\nf(1)\n")
    assert not raw.unclosed and len(raw.pairs) == 1


def test_placeholders_and_error_handling_by_language():
    assert body_placeholder("go") == 'panic("not implemented")'
    assert body_placeholder("typescriptreact") == 'throw new Error("not implemented");'
    assert body_placeholder("golang") == body_placeholder("go")  # an alias
    assert body_placeholder("elixir") == body_placeholder(None) == "..."
    assert handling_markers("python", "if not x:\n    raise ValueError()") == 2
    assert handling_markers("go", "if err != nil {") == 1
    assert handling_markers("cpp", "if (!p) throw x;") == 2
    assert handling_markers(None, "try { f() } catch (e) {}") == 2


def test_every_language_names_the_tools_that_work_on_it():
    assert info("python").tools == {"ruff", "black"}
    assert info("typescript").tools == {"prettier", "eslint"}
    assert "prettier" in info("css").tools and "eslint" not in info("css").tools
    assert info("go").tools == {"gofmt"}
    for language in known_languages():
        assert all(language in languages_of_tool(tool) for tool in info(language).tools)
    # clang-format's own names for its languages (the workspace's style reads them).
    assert languages_of_tool("clang-format") == set(style._CLANG_LANGUAGES)
