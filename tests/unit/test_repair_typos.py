"""Golden tests of the typos that real code showed the rules missing: misspelt keywords in
every language, an arrow function's lost ``>``, and the files only the language's own checker
rejects (``node --check`` where tree-sitter's grammar is lenient), which are never "nothing to
fix"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from daemon.checks.keywords import misspelt_keywords, slips_left
from daemon.checks.names import one_slip_apart
from daemon.checks.syntax import check_syntax
from daemon.checks.toolchain import _place, tool_diagnostic
from daemon.repair.diagnosis import diagnose
from daemon.repair.intent import describe
from tests.unit.test_repair_rules import assert_repaired_as_meant, repaired

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

KEYWORD_CASES = [
    (
        "python",
        "def f(a, b):\n    x = a + b\n    retrun x\n",
        "def f(a, b):\n    x = a + b\n    return x\n",
    ),
    ("python", "improt os\nprint(os.sep)\n", "import os\nprint(os.sep)\n"),
    (
        "javascript",
        "fucntion f(a) {\n  return a;\n}\n",
        "function f(a) {\n  return a;\n}\n",
    ),
    (
        "javascript",
        "function f(a) {\n  if (a) {\n    return 1;\n  } esle {\n    return 2;\n  }\n}\n",
        "function f(a) {\n  if (a) {\n    return 1;\n  } else {\n    return 2;\n  }\n}\n",
    ),
    ("typescript", "cosnt x: number = 1;\n", "const x: number = 1;\n"),
    ("go", "package main\n\nfucn main() {\n}\n", "package main\n\nfunc main() {\n}\n"),
    ("rust", "fn main() {\n    lte x = 1;\n}\n", "fn main() {\n    let x = 1;\n}\n"),
    (
        "java",
        "class A {\n    int f() {\n        retrun 1;\n    }\n}\n",
        "class A {\n    int f() {\n        return 1;\n    }\n}\n",
    ),
]


@pytest.mark.parametrize(("language", "broken", "intended"), KEYWORD_CASES)
def test_a_misspelt_keyword_is_spelt_as_the_keyword(language: str, broken: str, intended: str):
    assert_repaired_as_meant(language, broken, intended)


def test_one_slip_is_a_swap_of_neighbours_or_one_letter_more_less_or_wrong():
    assert one_slip_apart("retrun", "return")
    assert one_slip_apart("retun", "return")
    assert one_slip_apart("returnn", "return")
    assert one_slip_apart("reture", "return")
    assert not one_slip_apart("nruter", "return")
    assert not one_slip_apart("return", "return")
    assert not one_slip_apart("rtruen", "return")


def test_short_words_are_keywords_only_with_the_keywords_own_letters():
    assert misspelt_keywords("rust", "lte") == ("let",)
    assert misspelt_keywords("python", "fro") == ("for",)
    assert misspelt_keywords("python", "fo") == ()
    assert misspelt_keywords("python", "dif") == ()  # "def" with a letter wrong: a name
    assert misspelt_keywords("python", "return") == ()


def test_a_misspelt_keyword_left_in_place_counts_against_a_candidate():
    original = "if (a) {\n} esle {\n}\n"
    assert slips_left("javascript", original, "if (a) {\n} esle; {\n}\n") == 1
    assert slips_left("javascript", original, "if (a) {\n} else {\n}\n") == 0
    respelt = describe("javascript", original, "if (a) {\n} else {\n}\n", "rule", 2)
    assert respelt.lost == 0  # "esle" respelt as "else" is not the author's word lost
    kept = describe("javascript", original, "if (a) {\n} esle; {\n}\n", "rule", 1)
    assert respelt.key() < kept.key()


def test_a_word_the_code_uses_elsewhere_is_not_respelt():
    text = "def f(form):\n    x = form +\n    return form\n"
    assert not [t for t in _rules("python", text) if "misspelt" in t]


def _rules(language: str, text: str) -> list[str]:
    from daemon.repair.slips import slip_candidates

    problem = diagnose(language, text, False, None).syntax[0]
    return [rule for rule, _ in slip_candidates(language, text, problem)]


@needs_node
def test_an_arrow_written_equals_gets_its_arrow_back():
    broken = (
        "const best = [];\n"
        "console.log(best.slice(0, 3).map(([msg, comment]) = `${msg} ${comment}`));\n"
    )
    assert not check_syntax("javascript", broken), "tree-sitter accepts it; node does not"
    assert repaired("javascript", broken) == broken.replace(") = `", ") => `")


@needs_node
def test_a_file_node_rejects_is_diagnosed_where_node_says():
    broken = "function f(pkg, msg) {\n  if (!pkg || msg = null) {\n    return 1;\n  }\n}\n"
    assert not check_syntax("javascript", broken)
    found = diagnose("javascript", broken, False, None).syntax
    assert len(found) == 1
    assert (found[0].line, found[0].column, found[0].source) == (1, 6, "node")
    assert "Invalid left-hand side in assignment" in found[0].message
    assert repaired("javascript", broken) == broken.replace("msg = null", "msg == null")
    assert tool_diagnostic("javascript", broken.replace("msg = null", "msg == null")) is None


def test_the_checkers_messages_name_their_place():
    rustfmt = "error: expected `;`, found keyword `let`\n --> <stdin>:2:14\n  |\n"
    assert _place(rustfmt) == (1, 13)
    assert _place("<standard input>:4:2: expected '}'") == (3, 1)  # gofmt
    assert _place("something else went wrong") == (None, None)


# Real-code typos of the generated corpus (tests/bench/typos.py) that the rules missed.
LOST_BETWEEN_CASES = [
    (  # a lost "(" joined the callee and its argument
        "python",
        "import os\n\n\ndef size(path):\n    return os.stat(path).st_size + lenpath)\n",
        "import os\n\n\ndef size(path):\n    return os.stat(path).st_size + len(path)\n",
    ),
    (  # a lost "(" after a call's name
        "typescript",
        "const a = 'X';\nconst b = a.slice(1);\nconst c = a.slice 2);\n",
        "const a = 'X';\nconst b = a.slice(1);\nconst c = a.slice( 2);\n",
    ),
    (  # a lost dot of a member the file uses elsewhere
        "python",
        "import os\n\nA = os.path.join('a', 'b')\nB = os path.join('c', 'd')\n",
        "import os\n\nA = os.path.join('a', 'b')\nB = os.path.join('c', 'd')\n",
    ),
    (  # a lost decimal point
        "javascript",
        "function slow(t, left) {\n  return t * 1 5 > left;\n}\n",
        "function slow(t, left) {\n  return t * 1.5 > left;\n}\n",
    ),
    (  # a lost comma between arguments: not a member the file has
        "javascript",
        "function pad(group) {\n  return fmt('%d', 4 - group.length group);\n}\n",
        "function pad(group) {\n  return fmt('%d', 4 - group.length, group);\n}\n",
    ),
    (  # a lost comma after a closing bracket
        "typescript",
        "const pid = parseInt(process.argv[2] 10);\n",
        "const pid = parseInt(process.argv[2], 10);\n",
    ),
    (  # a lost colon of a type the file writes elsewhere
        "typescript",
        "function f(events: number[], reason number): number {\n  return reason;\n}\n",
        "function f(events: number[], reason: number): number {\n  return reason;\n}\n",
    ),
]


@pytest.mark.parametrize(("language", "broken", "intended"), LOST_BETWEEN_CASES)
def test_what_was_lost_between_two_words_is_put_back(language: str, broken: str, intended: str):
    assert_repaired_as_meant(language, broken, intended)


def test_a_doubled_closer_is_removed_rather_than_given_an_opener():
    broken = "function f(v) {\n  const code = v[0].charCodeAt(0));\n  return code;\n}\n"
    assert repaired("javascript", broken) == broken.replace("(0));", "(0);")
    # ``f)`` is taken for a doubled closer, not for ``f()`` (the likelier slip of the two).
    called = "function g(set, handler) {\n  set.add(handler));\n}\n"
    assert repaired("javascript", called) == called.replace("handler));", "handler);")


@needs_node
def test_a_repair_that_leaves_the_next_error_is_not_judged_by_the_checker_yet():
    # node rejects the file until both errors are repaired: the first round's candidate is
    # judged by the grammar, and the checker judges the file once the second is done.
    data = Path(__file__).resolve().parents[1] / "data"
    name = "javascript/two_errors_comma_paren.js"
    broken = (data / "broken" / name).read_text()
    assert repaired("javascript", broken) == (data / "fixed" / name).read_text()


def test_a_dot_lost_after_this_is_restored():
    assert_repaired_as_meant(
        "javascript",
        "class A {\n  get() {\n    this _update();\n    return this._value;\n  }\n}\n",
        "class A {\n  get() {\n    this._update();\n    return this._value;\n  }\n}\n",
    )
