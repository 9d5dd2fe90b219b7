"""Prompt building: cursor split, blank-run collapse, budget cut, snapping, header."""

from __future__ import annotations

import pytest

from daemon.cursor import Cursor, PositionError, split_at_cursor
from daemon.prompt.build import SNAP_LINES, build_prompt, collapse_blank_runs
from daemon.prompt.header import render_header
from daemon.protocol import Framework, Style, WorkspaceProfile
from models.families import PLAIN, QWEN_CODER
from tests.unit.fake_vocab import CharVocab, chars

FIM_VOCAB = CharVocab({"<|fim_prefix|>": 10, "<|fim_suffix|>": 11, "<|fim_middle|>": 12}, bos=None)


def test_split_at_cursor_counts_code_points():
    text = "héllo\nwörld\n"
    assert split_at_cursor(text, 1, 2) == ("héllo\nwö", "rld\n")
    assert split_at_cursor(text, 2, 0) == (text, "")


def test_split_handles_crlf_line_ends():
    text = "a\r\nbc\r\n"
    assert split_at_cursor(text, 1, 2) == ("a\r\nbc", "\r\n")


@pytest.mark.parametrize(("line", "column", "message"), [(5, 0, "line 5"), (0, 9, "column 9")])
def test_positions_outside_the_document_are_refused(line, column, message):
    with pytest.raises(PositionError, match=message):
        split_at_cursor("abc\ndef", line, column)


def test_long_blank_runs_collapse_to_two_blank_lines():
    assert collapse_blank_runs("a\n\n\n\n\n\nb") == "a\n\n\nb"
    assert collapse_blank_runs("a\n  \n\t\n\n\nb") == "a\n\n\nb"
    assert collapse_blank_runs("a\n\n\nb") == "a\n\n\nb"


def numbered(n: int) -> str:
    return "".join(f"line{i:04d}\n" for i in range(n))


def test_plain_prompt_keeps_the_end_of_the_prefix_within_budget():
    text = numbered(1000)
    built = build_prompt(
        PLAIN,
        CharVocab(bos=None),
        Cursor.locate(text, 1000, 0),
        budget=400,
        suffix_budget=0,
        header="",
    )
    assert len(built.tokens) <= 400
    assert built.prefix.endswith("line0999\n")
    assert built.tokens == chars(built.prefix)
    # The window starts on a snapped line, so typing does not move its first token.
    assert built.first_line % SNAP_LINES == 0


def test_typing_at_the_cursor_keeps_the_window_start():
    text = numbered(1000) + "def f"
    firsts = set()
    for typed in ("", "o", "oo", "oo(", "oo(x"):
        doc = text + typed
        built = build_prompt(
            PLAIN,
            CharVocab(bos=None),
            Cursor.locate(doc, 1000, 5 + len(typed)),
            budget=400,
            suffix_budget=0,
            header="",
        )
        firsts.add(built.prefix.split("\n", 1)[0])
    assert len(firsts) == 1


def test_fim_prompt_has_prefix_suffix_and_middle_within_budget():
    text = numbered(500)
    built = build_prompt(
        QWEN_CODER,
        FIM_VOCAB,
        Cursor.locate(text, 250, 4),
        budget=600,
        suffix_budget=100,
        header="# hi\n",
    )
    assert len(built.tokens) <= 600
    assert built.tokens[0] == 10 and built.tokens[-1] == 12
    assert 11 in built.tokens
    assert built.prefix.endswith("line")
    assert built.suffix.startswith("0250\n")
    assert len(chars(built.suffix)) <= 100


def test_a_file_larger_than_the_context_still_builds():
    text = "x = 1\n" * 200_000 + "y = "
    built = build_prompt(
        PLAIN,
        CharVocab(bos=None),
        Cursor.locate(text, 200_000, 4),
        budget=256,
        suffix_budget=0,
        header="",
    )
    assert 0 < len(built.tokens) <= 256
    assert built.prefix.endswith("y = ")


def test_one_enormous_line_is_cut_by_characters():
    text = "var a=" + "1," * 100_000
    built = build_prompt(
        PLAIN,
        CharVocab(bos=None),
        Cursor.locate(text, 0, len(text)),
        budget=300,
        suffix_budget=0,
        header="",
    )
    assert 0 < len(built.tokens) <= 300
    assert text.endswith(built.prefix)


def test_header_comes_first_and_oversized_headers_are_dropped():
    built = build_prompt(
        PLAIN,
        CharVocab(bos=None),
        Cursor.locate("x = ", 0, 4),
        budget=200,
        suffix_budget=0,
        header="# H\n",
    )
    assert built.tokens == chars("# H\nx = ")
    big = "# " + "h" * 500 + "\n"
    built = build_prompt(
        PLAIN,
        CharVocab(bos=None),
        Cursor.locate("x = ", 0, 4),
        budget=200,
        suffix_budget=0,
        header=big,
    )
    assert built.tokens == chars("x = ")


def test_header_states_language_versions_dependencies_and_style():
    profile = WorkspaceProfile(
        language="python",
        versions={"python": ">=3.11"},
        frameworks=[Framework(name="fastapi", version="0.115.0"), Framework(name="httpx")],
        style=Style(indent_style="space", indent_size=4, line_length=88),
    )
    header = render_header(profile, "python", "src/app.py")
    assert header.splitlines() == [
        "# Language: Python >=3.11",
        "# Dependencies: fastapi 0.115.0, httpx",
        "# Style: 4-space indentation, lines up to 88 characters",
        "# File: src/app.py",
    ]


def test_header_uses_the_language_comment_syntax():
    profile = WorkspaceProfile(language="go", versions={"go": "1.22"})
    header = render_header(profile, "go", "main.go")
    assert header.splitlines()[0] == "// Language: Go 1.22"
    css = render_header(None, "css", "a.css")
    assert css.splitlines()[0].startswith("/* Language: CSS")


def test_unknown_language_has_no_header():
    assert render_header(None, None, "notes") == ""
