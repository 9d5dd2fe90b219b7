"""Repair building blocks: parser hints, spans, change size, code retention, acceptance."""

from __future__ import annotations

import pytest

from daemon.checks.syntax import Diagnostic, check_syntax
from daemon.protocol import Span
from daemon.repair.diagnosis import (
    Problems,
    accepts,
    change_size,
    choose_span,
    keeps_code,
    unified_diff,
)
from daemon.repair.hints import code_end, hint_candidates

PYTHON_CASES = {
    "expected colon": ("def f(x)\n    return x\n", "def f(x):\n    return x\n"),
    "never closed": ("x = foo(1, 2\ny = 3\n", "x = foo(1, 2)\ny = 3\n"),
    "unexpected indent": ("def f():\n    x = 1\n      y = 2\n", "def f():\n    x = 1\n    y = 2\n"),
    "unindent": (
        "def f():\n    if x:\n        y = 1\n      z = 2\n",
        "def f():\n    if x:\n        y = 1\n    z = 2\n",
    ),
    "no block": ("def f():\nreturn 1\n", "def f():\n    return 1\n"),
    "unterminated": ("x = 'abc\ny = 2\n", "x = 'abc'\ny = 2\n"),
    "unmatched": ("x = (1, 2))\n", "x = (1, 2)\n"),
    "comma": ("x = [1 2]\n", "x = [1, 2]\n"),
    "equals": ("if x = 1:\n    pass\n", "if x == 1:\n    pass\n"),
}


@pytest.mark.parametrize("case", sorted(PYTHON_CASES))
def test_python_hints_offer_the_intended_fix(case):
    broken, fixed = PYTHON_CASES[case]
    problems = check_syntax("python", broken)
    assert problems
    candidates = hint_candidates("python", broken, problems)
    assert fixed in candidates


def test_tree_sitter_missing_tokens_are_inserted():
    broken = "function f(a {\n  return a + 1;\n}\n"
    candidates = hint_candidates("javascript", broken, check_syntax("javascript", broken))
    assert "function f(a) {\n  return a + 1;\n}\n" in candidates
    assert all(c != broken for c in candidates)


def test_code_end_skips_comments_and_strings():
    assert code_end("x = f(1  # note") == 7
    assert code_end("s = '# not a comment'  ") == len("s = '# not a comment'")


def test_span_covers_the_error_with_context_and_is_capped():
    lines = [f"l{i}" for i in range(30)]
    problem = Diagnostic(10, 0, 25, 0, "m", "tree-sitter")
    span = choose_span(lines, problem, max_lines=6)
    assert span.start_line == 9 and span.end_line == 15
    first = choose_span(lines, Diagnostic(0, 0, 0, 1, "m", "python"), 12)
    assert first.start_line == 0 and first.end_line == 2


def test_change_size_counts_edited_characters():
    assert change_size("def f(x)\n", "def f(x):\n") == 1
    assert change_size("abc", "abc") == 0
    assert change_size("abc", "xyz") == 3


def test_keeps_code_rejects_replacements_that_drop_the_users_words():
    assert keeps_code("if cfg.max <= 0\n    return err", "if cfg.max <= 0 {\n    return err")
    assert not keeps_code("if cfg.max <= 0\n    return nil, fmt.Errorf(x)", "return cfg")


def test_acceptance_needs_fewer_problems_and_none_at_the_span():
    before = Problems([Diagnostic(3, 0, 3, 1, "x", "python")], None)
    span = Span(start_line=2, end_line=5)
    assert accepts(before, Problems([], None), span, 0)
    later = Problems([Diagnostic(20, 0, 20, 1, "y", "python")], None)
    assert accepts(before, later, span, 0)
    same_place = Problems([Diagnostic(4, 0, 4, 1, "y", "python")], None)
    assert not accepts(before, same_place, span, 0)


def test_lint_findings_may_not_grow():
    lint = [Diagnostic(1, 0, 1, 1, "undefined name", "ruff", code="F821")]
    before = Problems([], lint)
    worse = Problems([], [*lint, Diagnostic(2, 0, 2, 1, "unused", "ruff", code="F401")])
    assert not accepts(before, worse, Span(start_line=0, end_line=3), 0)
    assert accepts(before, Problems([], []), Span(start_line=0, end_line=3), 0)


def test_unified_diff_names_the_file():
    diff = unified_diff("a\nb\n", "a\nc\n", "src/x.py")
    assert diff.startswith("--- a/src/x.py\n+++ b/src/x.py\n")
    assert "-b\n+c\n" in diff
