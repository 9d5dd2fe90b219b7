"""Block ends, skeleton placeholders and the error-handling check."""

from __future__ import annotations

import pytest

from daemon.answers.blocks import (
    block_end,
    body_placeholder,
    from_line_start,
    handling_markers,
    lead_in,
    steering_comment,
)
from daemon.cursor import Cursor


def test_python_body_ends_at_the_first_dedented_line():
    until = block_end("    ", language="python")
    text = "x = 1\n    return x\n\n\ndef other():\n"
    cut = until(text)
    assert cut is not None
    assert text[:cut] == "x = 1\n    return x\n"


def test_nothing_ends_while_the_block_goes_on():
    until = block_end("    ", language="python")
    assert until("x = 1\n    if x:\n        y = 2\n") is None
    assert until("x = 1\n    y") is None  # the last line is not complete yet


def test_a_closing_brace_at_the_header_level_ends_a_brace_body():
    until = block_end("  ", language="python")
    text = "const a = 1;\n  return a;\n}\n\nfunction next() {\n"
    cut = until(text)
    assert cut is not None
    assert text[:cut] == "const a = 1;\n  return a;\n"


def test_max_lines_ends_a_short_block():
    until = block_end("", language="python", max_lines=2)
    text = "a()\nb()\nc()\n"
    cut = until(text)
    assert cut is not None and text[:cut] == "a()\nb()\n"


def test_first_line_continues_the_cursor_line_and_is_not_judged():
    until = block_end("        ", language="python")
    assert until("return 1\n") is None


def test_placeholders_lead_in_and_steering():
    assert body_placeholder("python") == "..."
    assert body_placeholder("rust") == "todo!()"
    assert body_placeholder("typescript").startswith("throw new Error")
    assert lead_in("", "    ") == "    "
    assert lead_in("  ", "    ") == "  "
    assert lead_in("    ", "    ") == ""
    assert steering_comment("python", "    ").startswith("# Validate")
    assert steering_comment("go", "\t").endswith("\n\t")


def test_handling_markers_count_validation_and_errors():
    assert handling_markers("python", "if not path:\n    raise ValueError('x')") == 2
    assert handling_markers("python", "return json.load(f)") == 0
    assert handling_markers("go", 'if err != nil {\n return nil, fmt.Errorf("x")\n}') == 2
    assert handling_markers("typescript", "if (!x) { throw new Error('no') }") == 2


def test_text_written_from_the_line_start_is_inserted_at_the_cursor():
    body = "    for x in xs:\n        yield x\n"
    # The cursor at column 0: the model's indentation is the body's.
    assert from_line_start(body, "", "    ") == body
    # The cursor already indented: that whitespace is not typed twice.
    assert from_line_start(body, "    ", "    ") == "for x in xs:\n        yield x\n"
    # A first line indented unlike the body starts at the body's indentation.
    assert from_line_start("  return 1\n", "", "    ") == "    return 1\n"
    assert from_line_start("return 1", "    ", "    ") == "return 1"
    # A leading blank line is kept as written.
    assert from_line_start("\n    return 1", "", "    ") == "\n    return 1"


def test_a_prompt_cursor_at_the_start_of_a_blank_line():
    cursor = Cursor.locate("def f():\n    \nx = 1\n", 1, 4)
    bare = cursor.line_start()
    assert (bare.prefix, bare.suffix) == ("def f():\n", "\nx = 1\n")
    assert (bare.line, bare.column, bare.line_text) == (1, 0, "")
    with pytest.raises(ValueError):
        Cursor.locate("def f():\n    x\n", 1, 4).line_start()
