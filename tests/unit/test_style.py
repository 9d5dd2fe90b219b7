"""Indentation and line length: .editorconfig globs and precedence, formatter configs, the text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daemon.protocol import Style
from daemon.workspace.style import (
    complete_style,
    editorconfig_glob_matches,
    editorconfig_properties,
    infer_indent,
    parse_editorconfig,
    resolve_style,
)


def write(root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def style_of(root: Path, file: str, language: str | None) -> Style:
    path = root / file
    dirs = [path.parent]
    while dirs[-1] != root:
        dirs.append(dirs[-1].parent)
    style, _ = resolve_style(dirs, path, language)
    return style


# --- .editorconfig globs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*", "a.py", True),
        ("*", "deep/dir/a.py", True),  # no slash: the name, in any directory
        ("*.py", "src/pkg/mod.py", True),
        ("*.py", "src/pkg/mod.pyi", False),
        ("*.py", "mod.py/other", False),
        ("src/*.py", "src/a.py", True),  # a slash: relative to the .editorconfig
        ("src/*.py", "src/sub/a.py", False),
        ("src/*.py", "lib/src/a.py", False),
        ("/src/*.py", "src/a.py", True),
        ("src/**.py", "src/sub/deeper/a.py", True),
        ("**/test_*.py", "test_a.py", True),
        ("**/test_*.py", "tests/unit/test_a.py", True),
        ("**/test_*.py", "tests/unit/a_test.py", False),
        ("a?c.txt", "abc.txt", True),
        ("a?c.txt", "a/c.txt", False),
        ("a?c.txt", "ac.txt", False),
        ("[Mm]akefile", "Makefile", True),
        ("[Mm]akefile", "makefile", True),
        ("[Mm]akefile", "Xakefile", False),
        ("[!a]*.js", "b.js", True),
        ("[!a]*.js", "a.js", False),
        ("[a-c].md", "b.md", True),
        ("[a-c].md", "d.md", False),
        ("*.{js,ts}", "x.ts", True),
        ("*.{js,ts}", "x.tsx", False),
        ("*.{js,{mjs,cjs}}", "x.cjs", True),
        ("{package.json,.travis.yml}", ".travis.yml", True),
        ("{single}.txt", "{single}.txt", True),  # one alternative: literal braces
        ("{single}.txt", "single.txt", False),
        ("file{1..3}.txt", "file2.txt", True),
        ("file{1..3}.txt", "file4.txt", False),
        ("file{1..3}.txt", "file0.txt", False),
        ("v{-2..2}", "v-1", True),
        ("v{10..1}", "v7", True),
        ("\\*.txt", "*.txt", True),
        ("\\*.txt", "a.txt", False),
        ("a[/]b", "a[/]b", True),  # a class may not hold a slash: literal brackets
        ("[unclosed", "[unclosed", True),
        ("{unclosed", "{unclosed", True),
    ],
)
def test_editorconfig_glob(glob: str, path: str, matches: bool) -> None:
    assert editorconfig_glob_matches(glob, path) is matches


def test_parse_editorconfig() -> None:
    root, sections = parse_editorconfig(
        "; comment\nroot = TRUE\n\n[*]\nIndent_Style = Space\n# comment\n"
        "[*.py]\nindent_size = 4 ; trailing\nmax_line_length=off\n"
    )
    assert root is True
    assert sections == [
        ("*", {"indent_style": "space"}),
        ("*.py", {"indent_size": "4", "max_line_length": "off"}),
    ]


def test_editorconfig_precedence(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".editorconfig": "root = true\n[*]\nindent_size = 8\nmax_line_length = 120\n"
            "[*.py]\nindent_size = 4\n[*]\ntab_width = 3\n",
            "pkg/.editorconfig": "[*.py]\nmax_line_length = 99\n[mod.py]\nindent_size = 2\n",
            "pkg/mod.py": "",
        },
    )
    file = tmp_path / "pkg" / "mod.py"
    props, used = editorconfig_properties(file, [tmp_path / "pkg", tmp_path])
    assert props == {"indent_size": "2", "max_line_length": "99", "tab_width": "3"}
    assert used == [tmp_path / ".editorconfig", tmp_path / "pkg" / ".editorconfig"]


def test_editorconfig_root_stops_the_search(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".editorconfig": "[*]\nindent_style = tab\nmax_line_length = 80\n",
            "sub/.editorconfig": "root = true\n[*]\nindent_size = 2\n",
            "sub/a.js": "",
        },
    )
    props, _ = editorconfig_properties(tmp_path / "sub" / "a.js", [tmp_path / "sub", tmp_path])
    assert props == {"indent_size": "2"}


def test_editorconfig_path_globs_are_relative_to_their_file(tmp_path: Path) -> None:
    write(tmp_path, {".editorconfig": "[lib/*.js]\nindent_size = 3\n", "lib/a.js": "", "a.js": ""})
    assert style_of(tmp_path, "lib/a.js", None).indent_size == 3
    assert style_of(tmp_path, "a.js", None).indent_size is None


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ("indent_style = tab\ntab_width = 8", Style(indent_style="tab", indent_size=8)),
        (
            "indent_style = tab\nindent_size = tab\ntab_width = 4",
            Style(indent_style="tab", indent_size=4),
        ),
        ("indent_style = space\nindent_size = 2", Style(indent_style="space", indent_size=2)),
        ("max_line_length = off\nindent_size = 40", Style()),  # 40: out of range, ignored
        ("max_line_length = 5000", Style()),
        ("indent_style = weird\nmax_line_length = 72", Style(line_length=72)),
    ],
)
def test_editorconfig_values(tmp_path: Path, section: str, expected: Style) -> None:
    write(tmp_path, {".editorconfig": f"[*]\n{section}\n"})
    assert style_of(tmp_path, "notes.txt", None) == expected


# --- Formatter configs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"pyproject.toml": "[tool.ruff]\nline-length = 120\n"},
            Style(indent_style="space", indent_size=4, line_length=120),
        ),
        (
            {"pyproject.toml": "[tool.ruff.lint]\nselect = ['E']\n"},
            Style(indent_style="space", indent_size=4, line_length=88),
        ),
        (
            {"ruff.toml": "line-length = 79\nindent-width = 2\n"},
            Style(indent_style="space", indent_size=2, line_length=79),
        ),
        (
            {"ruff.toml": "line-length = 79\n", ".ruff.toml": "line-length = 110\n"},
            Style(indent_style="space", indent_size=4, line_length=110),
        ),
        (
            {
                "ruff.toml": "line-length = 79\n",
                "pyproject.toml": "[tool.ruff]\nline-length = 110\n",
            },
            Style(indent_style="space", indent_size=4, line_length=79),
        ),
        (
            {".ruff.toml": "[format]\nindent-style = 'tab'\n"},
            Style(indent_style="tab", indent_size=4, line_length=88),
        ),
        (
            {"pyproject.toml": "[tool.black]\nline-length = 100\n"},
            Style(indent_style="space", indent_size=4, line_length=100),
        ),
        ({"pyproject.toml": "[project]\nname = 'x'\n"}, Style()),
        ({"pyproject.toml": "[tool.ruff\n"}, Style()),
    ],
)
def test_python_formatters(tmp_path: Path, files: dict[str, str], expected: Style) -> None:
    write(tmp_path, files)
    assert style_of(tmp_path, "a.py", "python") == expected


def test_nearest_pyproject_without_ruff_is_passed_over(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "ruff.toml": "line-length = 100\n",
            "pkg/pyproject.toml": "[project]\nname = 'pkg'\n",
            "pkg/a.py": "",
        },
    )
    assert style_of(tmp_path, "pkg/a.py", "python").line_length == 100


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {".prettierrc": '{"printWidth": 120, "useTabs": true}'},
            Style(indent_style="tab", indent_size=2, line_length=120),
        ),
        (
            {".prettierrc": "# yaml\nprintWidth: 90\ntabWidth: 4\nsemi: false\n"},
            Style(indent_style="space", indent_size=4, line_length=90),
        ),
        (
            {".prettierrc.json": '{"tabWidth": 4}'},
            Style(indent_style="space", indent_size=4, line_length=80),
        ),
        (
            {".prettierrc.yaml": "useTabs: true\n"},
            Style(indent_style="tab", indent_size=2, line_length=80),
        ),
        (
            {".prettierrc.yml": "printWidth: 100\n"},
            Style(indent_style="space", indent_size=2, line_length=100),
        ),
        (
            {".prettierrc.toml": "printWidth = 110\ntabWidth = 3\n"},
            Style(indent_style="space", indent_size=3, line_length=110),
        ),
        (
            {"package.json": json.dumps({"prettier": {"printWidth": 95}})},
            Style(indent_style="space", indent_size=2, line_length=95),
        ),
        ({"package.json": json.dumps({"prettier": "@company/prettier-config"})}, Style()),
        (
            {
                "package.json": json.dumps({"prettier": {"printWidth": 95}}),
                ".prettierrc": '{"printWidth": 70}',
            },
            Style(indent_style="space", indent_size=2, line_length=95),
        ),
    ],
)
def test_prettier(tmp_path: Path, files: dict[str, str], expected: Style) -> None:
    write(tmp_path, files)
    assert style_of(tmp_path, "src/app.ts", "typescript") == expected


def test_prettier_explicit_beats_editorconfig_beats_prettier_defaults(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".prettierrc": '{"printWidth": 100}',
            ".editorconfig": "[*]\nindent_size = 4\nmax_line_length = 80\n",
        },
    )
    assert style_of(tmp_path, "a.tsx", "typescriptreact") == Style(
        indent_style="space", indent_size=4, line_length=100
    )


def test_prettier_config_is_not_used_for_python(tmp_path: Path) -> None:
    write(tmp_path, {".prettierrc": '{"printWidth": 100}'})
    assert style_of(tmp_path, "a.py", "python") == Style()


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, Style(indent_style="space", indent_size=4, line_length=100)),  # rustfmt's defaults
        (
            {"rustfmt.toml": "max_width = 80\nhard_tabs = true\n"},
            Style(indent_style="tab", indent_size=4, line_length=80),
        ),
        (
            {".rustfmt.toml": "tab_spaces = 2\n"},
            Style(indent_style="space", indent_size=2, line_length=100),
        ),
    ],
)
def test_rustfmt(tmp_path: Path, files: dict[str, str], expected: Style) -> None:
    write(tmp_path, files)
    assert style_of(tmp_path, "src/lib.rs", "rust") == expected


@pytest.mark.parametrize(
    ("config", "language", "expected"),
    [
        ("BasedOnStyle: LLVM\n", "cpp", Style(indent_style="space", indent_size=2, line_length=80)),
        (
            "BasedOnStyle: Microsoft\n",
            "c",
            Style(indent_style="space", indent_size=4, line_length=120),
        ),
        (
            "BasedOnStyle: Google\nUseTab: ForIndentation\nIndentWidth: 8\n",
            "cpp",
            Style(indent_style="tab", indent_size=8, line_length=80),
        ),
        ("ColumnLimit: 0\n", "cpp", Style(indent_style="space", indent_size=2)),
        (
            "---\nLanguage: Cpp\nColumnLimit: 100\n---\nLanguage: Java\nColumnLimit: 120\n...\n",
            "cpp",
            Style(indent_style="space", indent_size=2, line_length=100),
        ),
        (
            "---\nLanguage: Cpp\nColumnLimit: 100\n---\nLanguage: Java\nColumnLimit: 120\n",
            "java",
            Style(indent_style="space", indent_size=2, line_length=120),
        ),
        (
            "Language: Java\nBasedOnStyle: Google\n",
            "java",
            Style(indent_style="space", indent_size=2, line_length=100),
        ),
        (
            "BasedOnStyle: Google\n",
            "java",
            Style(),
        ),  # no Java section: clang-format is not Java's formatter here
    ],
)
def test_clang_format(tmp_path: Path, config: str, language: str, expected: Style) -> None:
    write(tmp_path, {".clang-format": config})
    assert style_of(tmp_path, "src/a.file", language) == expected


def test_clang_format_no_limit_is_not_overridden_by_editorconfig(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"_clang-format": "ColumnLimit: 0\n", ".editorconfig": "[*]\nmax_line_length = 80\n"},
    )
    assert style_of(tmp_path, "a.c", "c").line_length is None


def test_go_uses_tabs_whatever_editorconfig_says(tmp_path: Path) -> None:
    write(tmp_path, {".editorconfig": "[*]\nindent_style = space\nindent_size = 2\n"})
    assert style_of(tmp_path, "main.go", "go") == Style(indent_style="tab", indent_size=2)


def test_sources_are_the_files_used(tmp_path: Path) -> None:
    write(
        tmp_path, {".editorconfig": "[*.md]\nindent_size = 2\n", "ruff.toml": "line-length = 90\n"}
    )
    _, used = resolve_style([tmp_path], tmp_path / "a.py", "python")
    assert used == [tmp_path / "ruff.toml"]  # the .editorconfig has nothing for a .py file
    _, used = resolve_style([tmp_path], tmp_path / "a.md", "markdown")
    assert used == [tmp_path / ".editorconfig"]


# --- Indentation from the text ------------------------------------------------------------------

PY_4 = "class A:\n    def f(self):\n        if x:\n            return 1\n        return 2\n"
JS_2 = "function f() {\n  if (x) {\n    return 1;\n  }\n  /**\n   * doc\n   */\n  return 2;\n}\n"
C_TABS = "int f(void) {\n\tif (x) {\n\t\treturn 1;\n\t}\n\treturn 0;\n}\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PY_4, ("space", 4)),
        (JS_2, ("space", 2)),
        (C_TABS, ("tab", None)),
        ("no indentation\nat all\n", (None, None)),
        ("", (None, None)),
        ("x = f(a,\n      b)\ny = 1\nif y:\n    z = 2\nif z:\n    w = 3\n", ("space", 4)),
    ],
)
def test_infer_indent(text: str, expected: tuple[str | None, int | None]) -> None:
    assert infer_indent(text) == expected


def test_complete_style_fills_only_what_is_missing() -> None:
    assert complete_style(Style(line_length=100), PY_4) == Style(
        indent_style="space", indent_size=4, line_length=100
    )
    assert complete_style(Style(indent_style="space", indent_size=2), PY_4) == Style(
        indent_style="space", indent_size=2
    )
    # The config says tabs; spaces in the text don't get to set a size.
    assert complete_style(Style(indent_style="tab"), PY_4) == Style(indent_style="tab")
    assert complete_style(Style(indent_style="space"), JS_2) == Style(
        indent_style="space", indent_size=2
    )
    assert complete_style(Style(), None) == Style()
