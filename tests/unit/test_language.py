"""Language detection, step by step, and the language facts table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from daemon.language import detect_language, known_languages, language_info

REPO = Path(__file__).resolve().parents[2]

PYTHON_SNIPPET = """import os
import sys


def main(argv):
    for name in sorted(os.listdir(argv[1])):
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
"""

JS_SNIPPET = """const fs = require("fs");
const path = require("path");

function listDir(dir) {
  return fs.readdirSync(dir).map((name) => path.join(dir, name));
}

module.exports = { listDir };
console.log(listDir(process.argv[2]).join("\\n"));
"""

GO_SNIPPET = """package main

import (
\t"fmt"
\t"os"
)

func main() {
\tentries, _ := os.ReadDir(".")
\tfor _, e := range entries {
\t\tfmt.Println(e.Name())
\t}
}
"""

REQUIRED = [
    *("python", "javascript", "javascriptreact", "typescript", "typescriptreact", "go", "rust"),
    *("java", "kotlin", "c", "cpp", "csharp", "ruby", "php", "lua", "shellscript", "swift"),
    *("scala", "html", "css", "scss", "json", "jsonc", "yaml", "toml", "markdown", "sql"),
    *("dockerfile", "makefile", "cmake", "haskell", "elixir", "erlang", "zig", "dart", "r"),
    *("perl", "xml", "vue", "svelte"),
]


@pytest.mark.parametrize("language", REQUIRED)
def test_every_required_language_has_facts(language: str) -> None:
    info = language_info(language)
    assert info is not None
    assert info.id == language
    assert language in known_languages()


def test_language_facts() -> None:
    python = language_info("python")
    assert python is not None
    assert (python.name, python.line_comment, python.block_comment) == ("Python", "#", None)
    assert python.ecosystem == "python"
    tsx = language_info("typescriptreact")
    assert tsx is not None and tsx.name == "TypeScript (TSX)" and tsx.ecosystem == "node"
    html = language_info("html")
    assert html is not None and html.line_comment is None
    assert html.block_comment == ("<!--", "-->")
    facts = {i: language_info(i) for i in ("lua", "cpp", "java", "markdown")}
    assert {i: (f.line_comment, f.ecosystem) for i, f in facts.items() if f} == {
        "lua": ("--", None),
        "cpp": ("//", "cmake"),
        "java": ("//", "jvm"),
        "markdown": (None, None),
    }
    assert language_info("py") == python  # aliases resolve
    assert language_info("cobol-85") is None
    assert language_info(None) is None


@pytest.mark.parametrize(
    ("language_id", "expected"),
    [
        ("python", "python"),
        ("Python", "python"),
        ("py", "python"),
        ("js", "javascript"),
        ("ts", "typescript"),
        ("tsx", "typescriptreact"),
        ("golang", "go"),
        ("c++", "cpp"),
        ("sh", "shellscript"),
        ("bash", "shellscript"),
        ("  TypeScriptReact ", "typescriptreact"),
        ("my-dsl", "my-dsl"),  # unknown, but shaped like an id: the editor may know better
    ],
)
def test_editor_language_id_wins(language_id: str, expected: str) -> None:
    # The path says Ruby; the editor's id is taken first.
    assert detect_language("script.rb", "puts 1", language_id) == expected


@pytest.mark.parametrize("language_id", ["Not A Language!", "plaintext", "", "x" * 80])
def test_unusable_language_id_falls_through(language_id: str) -> None:
    assert detect_language("script.rb", "puts 1", language_id) == "ruby"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("Makefile", "makefile"),
        ("src/GNUmakefile", "makefile"),
        ("Dockerfile", "dockerfile"),
        ("deploy/Dockerfile.dev", "dockerfile"),
        ("Containerfile", "dockerfile"),
        ("CMakeLists.txt", "cmake"),
        ("Gemfile", "ruby"),
        ("Jenkinsfile", "groovy"),
        ("tsconfig.json", "jsonc"),
        ("requirements-dev.txt", "pip-requirements"),
        (".bashrc", "shellscript"),
    ],
)
def test_special_file_names(path: str, expected: str) -> None:
    assert detect_language(path, None) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.py", "python"),
        ("a.pyi", "python"),
        ("a.js", "javascript"),
        ("a.mjs", "javascript"),
        ("a.jsx", "javascriptreact"),
        ("a.ts", "typescript"),
        ("a.tsx", "typescriptreact"),
        ("a.go", "go"),
        ("a.rs", "rust"),
        ("A.java", "java"),
        ("a.kt", "kotlin"),
        ("a.c", "c"),
        ("a.cpp", "cpp"),
        ("a.hpp", "cpp"),
        ("a.cs", "csharp"),
        ("a.rb", "ruby"),
        ("a.php", "php"),
        ("a.lua", "lua"),
        ("a.sh", "shellscript"),
        ("a.swift", "swift"),
        ("a.scala", "scala"),
        ("a.html", "html"),
        ("a.css", "css"),
        ("a.scss", "scss"),
        ("a.json", "json"),
        ("a.jsonc", "jsonc"),
        ("a.yml", "yaml"),
        ("a.toml", "toml"),
        ("README.md", "markdown"),
        ("a.sql", "sql"),
        ("a.dockerfile", "dockerfile"),
        ("rules.mk", "makefile"),
        ("a.cmake", "cmake"),
        ("a.hs", "haskell"),
        ("a.ex", "elixir"),
        ("a.erl", "erlang"),
        ("a.zig", "zig"),
        ("a.dart", "dart"),
        ("a.R", "r"),
        ("a.pl", "perl"),
        ("a.xml", "xml"),
        ("App.vue", "vue"),
        ("App.svelte", "svelte"),
        ("C:\\src\\Main.JAVA", "java"),
    ],
)
def test_extensions(path: str, expected: str) -> None:
    assert detect_language(path, None) == expected


def test_header_is_c_unless_it_holds_cpp() -> None:
    assert detect_language("util.h", "int add(int a, int b);\n") == "c"
    assert detect_language("util.h", None) == "c"
    cpp = "#pragma once\n#include <vector>\nnamespace util {\nstd::vector<int> v();\n}\n"
    assert detect_language("util.h", cpp) == "cpp"


@pytest.mark.parametrize(
    ("first_line", "expected"),
    [
        ("#!/usr/bin/env python3", "python"),
        ("#!/usr/bin/python3.11 -u", "python"),
        ("#!/usr/bin/env -S node --experimental-vm-modules", "javascript"),
        ("#!/usr/bin/env -S uv run --script", "python"),
        ("#!/usr/bin/env -S deno run --allow-net", "typescript"),
        ("#!/bin/bash", "shellscript"),
        ("#!/bin/sh -e", "shellscript"),
        ("#!/usr/bin/env zsh", "shellscript"),
        ("#!/usr/bin/env ruby", "ruby"),
        ("#!/usr/bin/perl -w", "perl"),
        ("#!/usr/bin/env php", "php"),
        ("#!/usr/bin/env lua5.4", "lua"),
        ("#!/usr/bin/env -i PATH=/bin python", "python"),
        ("#!/usr/bin/env Rscript", "r"),
        ("#!/usr/bin/make -f", "makefile"),
        ("#!/usr/bin/env unknown-interpreter", None),
    ],
)
def test_shebang(first_line: str, expected: str | None) -> None:
    # .cgi is an extension we don't know, so this is the shebang step alone (no magika).
    assert detect_language("bin/tool.cgi", first_line + "\nrest\n") == expected
    if expected:
        assert detect_language("bin/tool", first_line + "\nrest\n") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# vim: set ft=python :\nx = 1\n", "python"),
        ("x = 1\n# vim: set filetype=ruby:\n", "ruby"),
        ("/* vi: filetype=c */\nint x;\n", "c"),
        ("# vim: ts=4 sw=4 ft=sh\necho hi\n", "shellscript"),
        ("# -*- mode: python -*-\nx = 1\n", "python"),
        ("# -*- mode: ruby; coding: utf-8 -*-\n", "ruby"),
        ("# -*- ruby -*-\nputs 1\n", "ruby"),
        ("// -*- c++ -*-\nint x;\n", "cpp"),
        ("# -*- coding: utf-8 -*-\nx = 1\n", None),
    ],
)
def test_modeline(text: str, expected: str | None) -> None:
    # A .conf file has an extension we don't know, so magika is not asked.
    assert detect_language("settings.conf", text) == expected


def test_modeline_only_in_first_or_last_five_lines() -> None:
    lines = ["line"] * 30
    lines[15] = "# vim: set ft=python :"
    assert detect_language("notes.conf", "\n".join(lines)) is None
    lines[15], lines[-2] = "line", "# vim: set ft=python :"
    assert detect_language("notes.conf", "\n".join(lines)) == "python"


def test_shebang_beats_modeline() -> None:
    assert detect_language("tool", "#!/bin/bash\n# vim: ft=python\n") == "shellscript"


def test_nothing_known() -> None:
    assert detect_language(None, None) is None
    assert detect_language("data.unknownext", "some words") is None
    assert detect_language("LICENSE", "") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [(PYTHON_SNIPPET, "python"), (JS_SNIPPET, "javascript"), (GO_SNIPPET, "go")],
)
def test_magika_on_extensionless_and_untitled(text: str, expected: str) -> None:
    pytest.importorskip("magika")
    assert detect_language("scripts/run", text) == expected
    assert detect_language(None, text) == expected
    assert detect_language("Untitled-1", text) == expected


def test_magika_not_used_when_the_extension_is_unknown() -> None:
    pytest.importorskip("magika")
    assert detect_language("notes.weird", PYTHON_SNIPPET) is None


def test_magika_one_liner_is_unknown() -> None:
    pytest.importorskip("magika")
    assert detect_language(None, "hello there\n") is None


def test_detection_without_magika_installed() -> None:
    # A fresh interpreter in which importing magika fails: detection still answers.
    code = (
        "import sys; sys.modules['magika'] = None\n"
        "from daemon.language import detect_language\n"
        f"print(detect_language(None, {PYTHON_SNIPPET!r}), detect_language('a.py', None))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["None", "python"]
