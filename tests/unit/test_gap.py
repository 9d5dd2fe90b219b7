"""Trimming answers to the gap at the cursor: the shape of the gap and each rule, as tables of
document (``█`` marks the cursor) + answer -> expected text, in Python, JavaScript and Go."""

from __future__ import annotations

from dataclasses import replace

import pytest

from daemon.answers.gap import (
    RULES,
    drop_repeated_runs,
    drop_suffix_repeats,
    fit_indentation,
    gap_shape,
    gap_until,
    keep_parseable,
    stop_at_block_exit,
    stop_at_shape,
    trim_to_gap,
)
from daemon.answers.gap.shape import comment_mark
from daemon.cursor import Cursor
from daemon.lexer import bracket_depths

MARK = "█"

# A function with its loop body split open: the cursor on an empty line at column 0.
PY_LOOP = """def total(xs):
    result = 0
    for x in xs:
█
        result += x
    return result
"""
# The same gap with the indentation typed.
PY_LOOP_TYPED = PY_LOOP.replace(MARK, "        " + MARK)
# The end of a nested block: the code below is less indented.
PY_BLOCK_END = """def has_close(numbers, threshold):
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j:
                if abs(a - b) < threshold:
█

    return False
"""
# The last line of a function, nothing below.
PY_LAST = """def add(a, b):
    total = a + b
█"""
PY_MID_LINE = "def f(a):\n    return g(█)\n"
PY_UNDER_WAY = "def f(a):\n    value = compute(█\n"
JS_IF = """function clamp(a, low) {
  if (a < low) {
    █
  }
  return a;
}
"""
JS_MIDDLE = """function sum(xs) {
  let total = 0;
  █
  return total;
}
"""
# The header of a loop is missing; its body is the code below (two-space indentation).
PY_HEADER = """def has_triple(s):
    if len(s) < 3:
      return False
█
      if s[i] == s[i + 1]:
        return False
    return True
"""
GO_LOOP = "func Sum(xs []int) int {\n\ttotal := 0\n█\n\treturn total\n}\n"


def at(document: str) -> Cursor:
    """The document without the mark, split at the mark."""
    offset = document.index(MARK)
    text = document.replace(MARK, "")
    before = text[:offset]
    return Cursor.locate(text, before.count("\n"), len(before.split("\n")[-1]))


def shape_of(document: str, language: str, max_lines: int | None = None):
    return replace(gap_shape(at(document), language), max_lines=max_lines)


# -- the shape -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "language", "kind", "indent", "floor", "unit"),
    [
        (PY_MID_LINE, "python", "line", "    ", "    ", "    "),
        (PY_UNDER_WAY, "python", "lines", "    ", "    ", "    "),
        (PY_LOOP, "python", "statement", "        ", "        ", "    "),
        (PY_LOOP_TYPED, "python", "statement", "        ", "        ", "    "),
        (PY_BLOCK_END, "python", "lines", " " * 20, " " * 20, "    "),
        (PY_LAST, "python", "lines", "    ", "", "    "),
        (
            "def f():\n    x = 1\n        █\n    return x\n",
            "python",
            "lines",
            " " * 8,
            " " * 8,
            "    ",
        ),
        (JS_IF, "javascript", "lines", "    ", "    ", "  "),
        (JS_MIDDLE, "javascript", "statement", "  ", "  ", "  "),
        # Column 0 after a statement: a header whose body is below may sit further out.
        (GO_LOOP, "go", "statement", "\t", "", "\t"),
    ],
)
def test_the_shape_of_the_gap(document, language, kind, indent, floor, unit):
    shape = gap_shape(at(document), language)
    assert (shape.kind, shape.indent, shape.floor, shape.unit) == (kind, indent, floor, unit)


@pytest.mark.parametrize(
    ("document", "language", "kind"),
    [
        # The line below closes the bracket the cursor is in: finish this line.
        (
            'msg = _("{a}").format(\n    a=name(█\n)\nprint(msg)\n',
            "python",
            "line",
        ),
        # Inside brackets opened above, the next item below: finish this line.
        ("x = call(\n    first,\n    second(█\n    third,\n)\n", "python", "line"),
        ("spec = (\n    Spec(█\n    if parsed\n    else other\n)\n", "python", "line"),
        # A call opened on its own line, a new statement below: its arguments may take lines.
        ("def f():\n    echo(█\n    return 1\n", "python", "lines"),
        # Inside brackets opened above, but the code below is outside them.
        ('d = {\n    "a": f(█\nx = 1\n', "python", "lines"),
        # Nothing below; and other languages as before.
        ("x = call(\n    first,\n    second(█", "python", "lines"),
        ("x = call(\n  first,\n  second(█\n);\n", "javascript", "lines"),
    ],
)
def test_a_line_inside_brackets_the_code_below_goes_on_with(document, language, kind):
    assert gap_shape(at(document), language).kind == kind


# -- drop_suffix_repeats ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "answer", "expected"),
    [
        # The model writes the new line, then the lines already below it.
        (
            PY_LOOP,
            "        if x < 0:\n            continue\n        result += x\n    return result\n",
            "        if x < 0:\n            continue",
        ),
        # Its first line is the next line of the file: nothing new is left.
        (PY_LOOP, "        result += x\n    return result", ""),
        # Nothing written repeats the code below.
        (PY_LOOP, "        x = abs(x)", "        x = abs(x)"),
        # Two lines that repeat lines a little further below.
        (
            "a = 1\n█\nb = 2\nc = 3\nd = 4\n",
            "x = 0\nc = 3\nd = 4\ne = 5",
            "x = 0",
        ),
        # A closing brace repeats the one below only with the line after it...
        (JS_IF, "a = low;\n  }\n  return a;", "a = low;"),
        # ... or at the end of the answer.
        (JS_IF, "a = low;\n  }", "a = low;"),
        # A brace that is followed by other code is the answer's own.
        (
            JS_IF,
            "if (a) {\n      a = low;\n    }\n    a += 1;",
            "if (a) {\n      a = low;\n    }\n    a += 1;",
        ),
        (
            GO_LOOP,
            "\tfor _, x := range xs {\n\t\ttotal += x\n\t}\n\treturn total\n}",
            "\tfor _, x := range xs {\n\t\ttotal += x\n\t}",
        ),
    ],
)
def test_drop_suffix_repeats(document, answer, expected):
    assert drop_suffix_repeats(answer, at(document)) == expected


# -- stop_at_block_exit ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "language", "answer", "expected"),
    [
        # The model goes on into the enclosing block and the next function.
        (
            PY_BLOCK_END,
            "python",
            "                    return True\n            count += 1\n\ndef other():\n",
            "                    return True",
        ),
        # Deeper lines stay: they are the block's own.
        (
            PY_LAST,
            "python",
            "    if total > 10:\n        total = 10\n    return total",
            "    if total > 10:\n        total = 10\n    return total",
        ),
        # A continuation inside brackets the answer opened may be less indented.
        (
            PY_UNDER_WAY,
            "python",
            "a,\n  b)\n    return value\nprint(1)",
            "a,\n  b)\n    return value",
        ),
        # A closing brace at the block's own column closes a block the answer did not open.
        (JS_IF, "javascript", "a = low;\n    }\n  return a;", "a = low;"),
        (JS_IF, "javascript", "a = low;\n  }", "a = low;"),
        (GO_LOOP.replace("\treturn total\n", ""), "go", "\ttotal += 1\n}\n", "\ttotal += 1"),
    ],
)
def test_stop_at_block_exit(document, language, answer, expected):
    shape = gap_shape(at(document), language)
    assert stop_at_block_exit(answer, shape, language) == expected


# -- drop_repeated_runs ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "typed", "expected"),
    [
        ("x = f()\nx = f()\nx = f()", "", "x = f()"),
        ("a()\nb()\na()\nb()\nc()", "", "a()\nb()\nc()"),
        # The first line continues the indentation typed before the cursor.
        ("total += 1;\n    total += 1;", "    ", "total += 1;"),
        # Closing braces repeat in well-formed code.
        ("      }\n    }\n  }", "", "      }\n    }\n  }"),
        ("}\n}", "", "}\n}"),
        ("a = 1\nb = 2", "", "a = 1\nb = 2"),
    ],
)
def test_drop_repeated_runs(answer, typed, expected):
    assert drop_repeated_runs(answer, typed) == expected


ABOVE = ["    if is_host:", "        # Ignore the port.", "        hostname = path[idx:]", ""]


@pytest.mark.parametrize(
    ("answer", "typed", "expected"),
    [
        # The lines right above written again, then nothing: nothing is left.
        ("# Ignore the port.\n        hostname = path[idx:]", "        ", ""),
        ("hostname = path[idx:]", "        ", ""),
        # The repeat dropped, the rest kept, its first line after the typed indentation.
        (
            "hostname = path[idx:]\n        hostname = hostname.lower()",
            "        ",
            "hostname = hostname.lower()",
        ),
        # What is left starts at another indentation than the cursor's: nothing.
        ("hostname = path[idx:]\n    return hostname", "        ", ""),
        # The same text at another indentation is another line.
        ("hostname = path[idx:]", "    ", "hostname = path[idx:]"),
        # A line the document had further up is not a repeat.
        ("# Ignore the port.", "        ", "# Ignore the port."),
        # Text typed on the cursor's line: its line is the answer's, never dropped for this.
        ("path[idx:]", "        hostname = ", "path[idx:]"),
    ],
)
def test_drop_repeated_runs_of_the_lines_above(answer, typed, expected):
    assert drop_repeated_runs(answer, typed, ABOVE, len(ABOVE)) == expected


def test_trim_to_gap_drops_the_line_above_written_again():
    document = "def f(path, idx):\n    hostname = path[idx:]\n    █\n    return hostname\n"
    cursor = at(document)
    trimmed = trim_to_gap("hostname = path[idx:]", cursor, "python", gap_shape(cursor, "python"))
    assert trimmed.text == "" and trimmed.fired == ("drop_repeated_runs",)


# -- fit_indentation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "language", "answer", "expected"),
    [
        # Column 0 inside an indented block: the model wrote no indentation.
        (PY_LOOP, "python", "if x:", "        if x:"),
        # 8 spaces where the block has 12: the whole answer moves, keeping its shape.
        (
            "def f(rows):\n    for row in rows:\n        if row:\n█\n            print(row)\n",
            "python",
            "        for cell in row:\n            print(cell)",
            "            for cell in row:\n                print(cell)",
        ),
        # Too deep for the block.
        (PY_LOOP, "python", "            x = abs(x)", "        x = abs(x)"),
        # Leading blank lines would add lines to the file.
        (PY_LOOP, "python", "\n\n        x = abs(x)", "        x = abs(x)"),
        # At the end of a block, an enclosing block's level is the model's choice.
        (PY_LAST, "python", "    return total", "    return total"),
        # Indentation typed before the cursor, and more written by the model.
        (PY_LOOP_TYPED, "python", "    x = 1\n            y = 2", "x = 1\n        y = 2"),
        # The indentation typed before the cursor, written again: the lines count from column 0.
        (
            'def load(path):\n    """Read it."""\n    █',
            "python",
            "    with open(path) as f:\n        return f.read()",
            "with open(path) as f:\n        return f.read()",
        ),
        # A file indented with tabs gets tabs.
        (GO_LOOP, "go", "    total++\n    total--", "\ttotal++\n\ttotal--"),
        (
            GO_LOOP,
            "go",
            "        for _, x := range xs {\n            total += x\n        }",
            "\tfor _, x := range xs {\n\t\ttotal += x\n\t}",
        ),
        # A header whose body is the code below sits one level out...
        (PY_HEADER, "python", "    for i in range(len(s) - 2):", "    for i in range(len(s) - 2):"),
        # ... but any other statement sits in the block.
        (PY_HEADER, "python", "    i = 0", "      i = 0"),
        # After a line that opens a block, its body comes first.
        (PY_LOOP, "python", "    for y in x:", "        for y in x:"),
        # A closing brace may close the enclosing block.
        ("function f() {\n  g();\n█", "javascript", "}", "}"),
        # Finishing a line changes nothing.
        (PY_MID_LINE, "python", "    1", "    1"),
    ],
)
def test_fit_indentation(document, language, answer, expected):
    assert fit_indentation(answer, gap_shape(at(document), language), language) == expected


# -- stop_at_shape ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "language", "answer", "max_lines", "expected"),
    [
        (PY_MID_LINE, "python", "a)\nprint(a)", None, "a)"),
        (PY_LOOP, "python", "        x = abs(x)\n        y = 2", None, "        x = abs(x)"),
        # One statement with the block it opens, and its else.
        (
            PY_LOOP,
            "python",
            "        if x < 0:\n            x = 0\n        else:\n            x -= 1\n"
            "        y = 2",
            None,
            "        if x < 0:\n            x = 0\n        else:\n            x -= 1",
        ),
        # A statement over several lines of brackets.
        (
            PY_LOOP,
            "python",
            "        x = max(\n            x, 0\n        )\n        y = 2",
            None,
            "        x = max(\n            x, 0\n        )",
        ),
        # A comment line goes with the statement after it.
        (
            PY_LOOP,
            "python",
            "        # skip\n        x = abs(x)\n        y = 1",
            None,
            "        # skip\n        x = abs(x)",
        ),
        (
            JS_MIDDLE,
            "javascript",
            "  for (const x of xs) {\n    total += x;\n  }\n  total *= 2;",
            None,
            "  for (const x of xs) {\n    total += x;\n  }",
        ),
        (
            JS_MIDDLE,
            "javascript",
            "  if (!xs) {\n    return 0;\n  } else {\n    xs.sort();\n  }\n  total = 1;",
            None,
            "  if (!xs) {\n    return 0;\n  } else {\n    xs.sort();\n  }",
        ),
        (GO_LOOP, "go", "\ttotal = len(xs)\n\ttotal *= 2", None, "\ttotal = len(xs)"),
        # The block's body is the code below: only its header is new.
        (
            PY_HEADER,
            "python",
            "    for i in range(len(s) - 2):\n      if s[i] == s[i + 2]:\n        return False",
            None,
            "    for i in range(len(s) - 2):",
        ),
        (
            "func f(xs []int) {\n█\n\t\tuse(x)\n\t}\n}\n",
            "go",
            "\tfor _, x := range xs {\n\t\tprint(x)\n\t}",
            None,
            "\tfor _, x := range xs {",
        ),
        # At the end of a block: the next lines, as many as allowed.
        (PY_LAST, "python", "    a = 1\n    b = 2\n    c = 3", 2, "    a = 1\n    b = 2"),
        (PY_LAST, "python", "    a = 1\n    b = 2", None, "    a = 1\n    b = 2"),
    ],
)
def test_stop_at_shape(document, language, answer, max_lines, expected):
    shape = shape_of(document, language, max_lines)
    assert stop_at_shape(answer, shape, language) == expected


# -- keep_parseable --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "language", "answer", "expected", "ok", "reason"),
    [
        (PY_LAST, "python", "    return total", "    return total", True, None),
        (PY_LAST, "python", "    x = 1\n    y = (", "    x = 1", True, "kept the first line"),
        (
            PY_LAST,
            "python",
            "    x = 1\n    y = 2\n    z = ]",
            "    x = 1\n    y = 2",
            True,
            "kept the first 2 lines",
        ),
        (PY_LAST, "python", "    return )", "", False, "failed verification"),
        # A document that did not parse: only the first line is tried, as before.
        (
            PY_LAST + "\n\nbroken = (\n",
            "python",
            "    x = 1\n    y = 2\n    z = ]",
            "    x = 1",
            True,
            "kept the first line",
        ),
        (JS_MIDDLE, "javascript", "total = 1;\n  total = );", "total = 1;", True, "first line"),
        # No parser: the answer stands as written.
        ("x = █\n", "cobol", "1\n)))", "1\n)))", True, "not verified"),
    ],
)
def test_keep_parseable(document, language, answer, expected, ok, reason):
    kept = keep_parseable(answer, at(document), language)
    assert kept.text == expected and kept.verdict.ok is ok
    if reason is None:
        assert kept.verdict.reason is None
    else:
        assert reason in (kept.verdict.reason or "")


# -- all together ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "language", "answer", "expected", "fired"),
    [
        # HumanEval-like: the missing line, then the rest of the function again.
        (
            PY_BLOCK_END,
            "python",
            "                    return True\n\n    return False\n",
            "                    return True",
            ("drop_suffix_repeats",),
        ),
        # The right line at 8 spaces where the block has 12, then the code below again.
        (
            "def f(rows):\n    for row in rows:\n        if row:\n█\n            print(row)\n",
            "python",
            "        row = row.strip()\n        print(row)\n",
            "            row = row.strip()",
            ("fit_indentation", "drop_suffix_repeats"),
        ),
        # A loop on one line, then the next function.
        (
            PY_LAST,
            "python",
            "    total += 1\n    total += 1\n    total += 1\n    return total\n"
            "\ndef g():\n    pass",
            "    total += 1\n    return total",
            ("stop_at_block_exit", "drop_repeated_runs"),
        ),
        (
            JS_MIDDLE,
            "javascript",
            "for (const x of xs) total += x;\n  return total;\n}\n",
            "for (const x of xs) total += x;",
            ("drop_suffix_repeats",),
        ),
        (
            GO_LOOP,
            "go",
            "    for _, x := range xs {\n        total += x\n    }\n    return total\n}\n",
            "\tfor _, x := range xs {\n\t\ttotal += x\n\t}",
            ("fit_indentation", "drop_suffix_repeats"),
        ),
        # Nothing to trim.
        (PY_LOOP_TYPED, "python", "x = abs(x)", "x = abs(x)", ()),
    ],
)
def test_trim_to_gap(document, language, answer, expected, fired):
    cursor = at(document)
    trimmed = trim_to_gap(answer, cursor, language, gap_shape(cursor, language))
    assert trimmed.text == expected
    assert trimmed.fired == fired
    assert trimmed.verdict is not None and trimmed.verdict.ok


def test_an_answer_that_does_not_parse_keeps_its_parseable_lines():
    cursor = at(PY_LAST)
    trimmed = trim_to_gap("    x = 1\n    y = (", cursor, "python", gap_shape(cursor, "python"))
    assert trimmed.text == "    x = 1" and trimmed.fired == ("keep_parseable",)
    assert trimmed.whole is not None and not trimmed.whole.ok
    assert trimmed.verdict is not None and trimmed.verdict.ok


# -- a first line no later line can mend ----------------------------------------------------

PY_IMPORT_TYPED = "from a import b, c,█\n\n\ndef f():\n    return b\n"


@pytest.mark.parametrize(
    ("document", "answer", "message"),
    [
        # prose where a statement goes
        (PY_LOOP, "        1. Add each number.\n        result += x", "invalid syntax"),
        # a line break where the statement being typed cannot go on
        (PY_IMPORT_TYPED, "\n    d, e", "trailing comma"),
    ],
)
def test_an_answer_whose_first_line_no_later_line_mends_fails_verification(
    document, answer, message
):
    cursor = at(document)
    trimmed = trim_to_gap(answer, cursor, "python", gap_shape(cursor, "python"))
    assert trimmed.text == "" and "drop_broken_line" in trimmed.fired
    assert trimmed.verdict is not None and not trimmed.verdict.ok
    assert "first line does not parse" in (trimmed.verdict.reason or "")
    assert message in (trimmed.verdict.reason or "")


@pytest.mark.parametrize(
    ("document", "answer"),
    [
        (PY_IMPORT_TYPED, " d"),  # the statement finished
        (PY_UNDER_WAY, "a,\n        b)"),  # a bracket carries the statement on
        (PY_LOOP, "        if x < 0:\n            x = 0"),  # a block opened
        (PY_MID_LINE, "a, b"),  # the rest of the line follows the answer: not judged
    ],
)
def test_an_answer_whose_first_line_can_stand_is_kept(document, answer):
    cursor = at(document)
    trimmed = trim_to_gap(answer, cursor, "python", gap_shape(cursor, "python"))
    assert "drop_broken_line" not in trimmed.fired and trimmed.text.strip()


def test_the_engine_stops_at_a_first_line_no_later_line_mends():
    cursor = at(PY_IMPORT_TYPED)
    until = gap_until(cursor, "python", gap_shape(cursor, "python"))
    assert until("\n") == 0  # the line break alone: the import is left unfinished
    assert until.cut_by == "drop_broken_line" and until.refused is not None
    assert "trailing comma" in (until.refused.reason or "")
    cursor = at(PY_LOOP)
    until = gap_until(cursor, "python", gap_shape(cursor, "python"))
    assert until("        1. Add each number.\n") == 0 and until.cut_by == "drop_broken_line"
    # judged once: a first line that stands is not parsed again at each line
    until = gap_until(cursor, "python", gap_shape(cursor, "python"))
    assert until("        if x < 0:\n") is None and until.refused is None


@pytest.mark.parametrize("number", ["0", "1007", "3.11", "-1", "0x1F", "1e-3"])
def test_a_number_alone_on_a_new_line_fails_verification(number):
    for document in (PY_LOOP, PY_LOOP_TYPED, PY_LAST):
        cursor = at(document)
        shape = gap_shape(cursor, "python")
        trimmed = trim_to_gap(f"        {number}\n", cursor, "python", shape)
        assert trimmed.text == "" and "drop_broken_line" in trimmed.fired
        assert "a number alone" in (trimmed.verdict.reason or "")
        until = gap_until(cursor, "python", shape)
        assert until(f"{number}\n") == 0 and until.cut_by == "drop_broken_line"


@pytest.mark.parametrize(
    ("document", "answer"),
    [
        ("values = [\n    1,\n█\n]\n", "    2"),  # inside a bracket: an item of the list
        ("def f(x):\n    return x +█\n", " 1"),  # typed on the line: the rest of it
        (PY_LOOP, "        x = 0"),
        (PY_LOOP, "        ..."),  # an ellipsis is a statement of its own
    ],
)
def test_a_number_that_is_not_a_statement_of_its_own_stands(document, answer):
    cursor = at(document)
    trimmed = trim_to_gap(answer, cursor, "python", gap_shape(cursor, "python"))
    assert "drop_broken_line" not in trimmed.fired and trimmed.text.strip()


def test_the_engine_leaves_a_comma_and_a_closer_to_the_rules_that_mend_them():
    cursor = at(PY_IMPORT_TYPED.replace("c,", "c"))
    until = gap_until(cursor, "python", gap_shape(cursor, "python"))
    until(", d,\n")  # drop_stray_comma may take the comma off
    assert until.refused is None and until.cut_by != "drop_broken_line"
    cursor = at("def f(a):\n    value = compute(a█\n")
    until = gap_until(cursor, "python", gap_shape(cursor, "python"))
    until("))\n")  # drop_extra_closers may take a closer off
    assert until.refused is None and until.cut_by != "drop_broken_line"


def test_without_verification_nothing_is_parsed():
    cursor = at(PY_LAST)
    trimmed = trim_to_gap("    y = (", cursor, "python", gap_shape(cursor, "python"), verify=False)
    assert trimmed.text == "    y = (" and trimmed.verdict is None


# -- the engine's until ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "language", "text", "expected"),
    [
        # One statement: the engine stops as soon as its line is complete.
        (PY_LOOP, "python", "        x = abs(x)\n", "        x = abs(x)"),
        # An opener goes on until its body ends.
        (PY_LOOP, "python", "        if x < 0:\n            x = 0\n", None),
        (
            PY_LOOP,
            "python",
            "        if x < 0:\n            x = 0\n        result += x\n",
            "        if x < 0:\n            x = 0",
        ),
        # The block goes on: no end yet; it ends where the answer leaves the block.
        (PY_LAST, "python", "    x = 1\n    y = 2\n", None),
        (PY_LAST, "python", "    x = 1\n\ndef g():\n", "    x = 1"),
        # Writing the code below again ends the answer before it.
        (
            PY_BLOCK_END,
            "python",
            "                    return True\n\n    return False\n",
            "                    return True",
        ),
        # The first line repeats the next one: nothing is kept.
        (PY_LOOP, "python", "        result += x\n", ""),
        # Only complete lines are judged.
        (PY_LOOP, "python", "        x = abs(", None),
        (JS_IF, "javascript", "a = low;\n  }\n", "a = low;"),
    ],
)
def test_gap_until(document, language, text, expected):
    cursor = at(document)
    until = gap_until(cursor, language, gap_shape(cursor, language))
    cut = until(text)
    assert (None if cut is None else text[:cut]) == expected


def test_gap_until_stops_at_max_lines():
    cursor = at(PY_LAST)
    until = gap_until(cursor, "python", shape_of(PY_LAST, "python", max_lines=2))
    text = "    a = 1\n    b = 2\n"
    cut = until(text)
    assert cut is not None and text[:cut] == "    a = 1\n    b = 2"


def test_every_rule_can_be_left_out_by_name():
    cursor = Cursor.locate("def f(x):\n    return \n\nprint(f(1))\n", 1, 11)
    shape = gap_shape(cursor, "python")
    answer = "x + 1\n\nprint(f(1))"
    assert trim_to_gap(answer, cursor, "python", shape).text == "x + 1"
    kept = trim_to_gap(answer, cursor, "python", shape, skip=RULES)
    assert kept.text.startswith("x + 1\n") and kept.fired == ()


@pytest.mark.parametrize(
    ("language", "mark"),
    [
        (None, "#"),
        ("python", "#"),
        ("lua", "--"),
        ("sql", "--"),
        ("haskell", "--"),
        ("go", "//"),
        ("css", None),
        ("no-such-language", "//"),
    ],
)
def test_the_line_comment_is_the_languages_own(language, mark):
    assert comment_mark(language) == mark


def test_brackets_in_a_lua_or_sql_comment_are_not_counted():
    assert list(bracket_depths("f(x) -- (note", "lua")) == [(1, 1), (3, 0)]
    assert list(bracket_depths("count(*) -- f(", "sql")) == [(5, 1), (7, 0)]
    # In CSS, with no line comments, "--" is a custom property's name.
    assert list(bracket_depths("a { --x: f(1) }", "css")) == [(2, 1), (10, 2), (12, 1), (14, 0)]
