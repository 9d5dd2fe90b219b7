"""Repair building blocks: parser hints, spans, change size, code retention, acceptance."""

from __future__ import annotations

import pytest

from daemon.checks.syntax import Diagnostic, check_syntax
from daemon.repair.diagnosis import (
    Problems,
    accepts,
    change_size,
    choose_span,
    unified_diff,
)
from daemon.repair.hints import hint_candidates
from daemon.repair.intent import keeps_every_token
from daemon.repair.layout import code_end

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
    assert code_end("python", "x = f(1  # note") == 7
    assert code_end("python", "s = '# not a comment'  ") == len("s = '# not a comment'")


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


def test_model_text_must_keep_every_token_of_the_span():
    assert keeps_every_token(
        "go", "if cfg.max <= 0\n    return err", "if cfg.max <= 0 {\n    return err"
    )
    assert not keeps_every_token(
        "go", "if cfg.max <= 0\n    return nil, fmt.Errorf(x)", "return cfg"
    )
    assert not keeps_every_token("python", "add(1, 2", "add(1)")


def test_acceptance_needs_the_target_gone_and_nothing_broken_before_it():
    before = Problems([Diagnostic(3, 4, 3, 5, "x", "python")], None)
    assert accepts(before, Problems([], None))
    later = Problems([Diagnostic(20, 0, 20, 1, "y", "python")], None)
    assert accepts(before, later)  # the compiler's next error: the next round's work
    assert not accepts(before, Problems([Diagnostic(3, 4, 3, 5, "x", "python")], None))
    assert not accepts(before, Problems([Diagnostic(1, 0, 1, 1, "new", "python")], None))
    tree = Problems(
        [Diagnostic(3, 4, 3, 5, "x", "tree-sitter"), Diagnostic(9, 0, 9, 1, "y", "tree-sitter")],
        None,
    )
    assert accepts(tree, Problems([Diagnostic(9, 0, 9, 1, "y", "tree-sitter")], None))
    moved = Problems(
        [Diagnostic(5, 0, 5, 1, "x", "tree-sitter"), Diagnostic(9, 0, 9, 1, "y", "tree-sitter")],
        None,
    )
    assert not accepts(tree, moved)  # as many errors as before: not progress


def test_lint_findings_may_not_grow():
    lint = [Diagnostic(1, 0, 1, 1, "undefined name", "ruff", code="F821")]
    before = Problems([], lint)
    worse = Problems([], [*lint, Diagnostic(2, 0, 2, 1, "unused", "ruff", code="F401")])
    assert not accepts(before, worse)
    assert accepts(before, Problems([], []))


def test_unified_diff_names_the_file():
    diff = unified_diff("a\nb\n", "a\nc\n", "src/x.py")
    assert diff.startswith("--- a/src/x.py\n+++ b/src/x.py\n")
    assert "-b\n+c\n" in diff
