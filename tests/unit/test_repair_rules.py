"""Golden tests of the repair's rules and ranking (no model): each common slip in each language
where it applies, closers placed where the layout says, and the ranking that prefers what the
author meant over what merely parses."""

from __future__ import annotations

import pytest

from daemon.checks.syntax import check_syntax
from daemon.checks.toolchain import ToolVerdict
from daemon.repair import rounds
from daemon.repair.diagnosis import diagnose
from daemon.repair.intent import Candidate, close_call, describe, ranked, token_change
from daemon.repair.layout import closer_candidates, layout_mismatches
from daemon.repair.rounds import checked_best, rules_here
from daemon.repair.scan import scan


def repaired(language: str, text: str, rounds: int = 4) -> str | None:
    """What the rules alone make of ``text``: every error repaired in turn, or None."""
    problems = diagnose(language, text, False, None)
    names = not problems.syntax  # as the pipeline: misspelt names only in a file that parses
    for _ in range(rounds):
        if not problems.targets:
            return text
        problems, _, found = rules_here(language, text, problems, 6)
        best, _ = checked_best(language, ranked(found), problems.targets[0].line)
        if best is None:
            return None
        text = best.text
        problems = diagnose(language, text, False, None, names)
    return None if problems.targets else text


CASES = [
    # (language, broken, intended)
    # A contextual keyword is a name before a lost comma.
    (
        "typescript",
        "function check(name: string, type: string, all: boolean): void {}\n"
        "check(name, type all);\n",
        "function check(name: string, type: string, all: boolean): void {}\n"
        "check(name, type, all);\n",
    ),
    ("javascript", "const o = { value true };\n", "const o = { value: true };\n"),
    (
        "java",
        "class A {\n    int f(int a, int b) {\n        return (a <= b ? b - a  0);\n    }\n}\n",
        "class A {\n    int f(int a, int b) {\n        return (a <= b ? b - a : 0);\n    }\n}\n",
    ),
    (
        "c",
        "int main(int argc char **argv) {\n    return 0;\n}\n",
        "int main(int argc, char **argv) {\n    return 0;\n}\n",
    ),
    (
        "typescript",
        "function f(p? number): number {\n  return 1;\n}\n",
        "function f(p?: number): number {\n  return 1;\n}\n",
    ),
    (
        "python",
        'import warnings\nwarnings.warn\n    "x",\n    stacklevel=(2))\n',
        'import warnings\nwarnings.warn(\n    "x",\n    stacklevel=(2))\n',
    ),
    (
        "javascript",
        "const width = s = {\n  return s.length;\n};\n",
        "const width = s => {\n  return s.length;\n};\n",
    ),
    (
        "java",
        "package a.b\n\n/**\n * Doc.\n */\npublic class A {\n}\n",
        "package a.b;\n\n/**\n * Doc.\n */\npublic class A {\n}\n",
    ),
    (
        "python",
        "x = 1\nif x > 0:\n    y = 1\nelse if x < 0:\n    y = 2\n",
        "x = 1\nif x > 0:\n    y = 1\nelif x < 0:\n    y = 2\n",
    ),
    (
        "python",
        'def main():\n    print "hello"\n    return 0\n',
        'def main():\n    print("hello")\n    return 0\n',
    ),
    (
        "python",
        "def f(a, b):\n    total = add(a, b\n    return total\n",
        "def f(a, b):\n    total = add(a, b)\n    return total\n",
    ),
    (
        "python",
        "import os\nfor name in sorted(os.listdir(root):\n    print(name)\n",
        "import os\nfor name in sorted(os.listdir(root)):\n    print(name)\n",
    ),
    (
        "python",
        'config = {\n    "a": 1,\n    "b": 2,\n\nprint(config)\n',
        'config = {\n    "a": 1,\n    "b": 2,\n}\n\nprint(config)\n',
    ),
    ("python", "items = [\n    1,\n    2\n    3,\n]\n", "items = [\n    1,\n    2,\n    3,\n]\n"),
    (
        "python",
        "class A:\n    def f(self):\n        x = 1\n    return x\n",
        "class A:\n    def f(self):\n        x = 1\n        return x\n",
    ),
    (
        "python",
        "def f(x):\n    if x = 1:\n        return 2\n    return 3\n",
        "def f(x):\n    if x == 1:\n        return 2\n    return 3\n",
    ),
    (
        "python",
        'def f():\n    name = "world\n    return name\n',
        'def f():\n    name = "world"\n    return name\n',
    ),
    (
        "javascript",
        "function total(items) {\n  let sum = 0;\n  for (const item of items) {\n"
        "    sum += item.price;\n  return sum;\n}\n\nfunction main() {\n"
        "  console.log(total([]));\n}\n",
        "function total(items) {\n  let sum = 0;\n  for (const item of items) {\n"
        "    sum += item.price;\n  }\n  return sum;\n}\n\nfunction main() {\n"
        "  console.log(total([]));\n}\n",
    ),
    (
        "javascript",
        'function greet(name) {\n  console.log("hello, " + name);\n  console.log("bye);\n}\n',
        'function greet(name) {\n  console.log("hello, " + name);\n  console.log("bye");\n}\n',
    ),
    (
        "javascript",
        "function title(x) {\n  return `# ${x.name};\n}\n",
        "function title(x) {\n  return `# ${x.name}`;\n}\n",
    ),
    (
        "javascript",
        "const items = [\n  1,\n  2\n  3,\n];\n",
        "const items = [\n  1,\n  2,\n  3,\n];\n",
    ),
    (
        "typescript",
        "class Box {\n  size(): number {\n    return 1;\n\n  name(): string {\n"
        '    return "box";\n  }\n}\n',
        "class Box {\n  size(): number {\n    return 1;\n  }\n\n  name(): string {\n"
        '    return "box";\n  }\n}\n',
    ),
    (
        "go",
        "package main\n\nfunc f(x int) int {\n\tif x <= 0\n\t\treturn 0\n\t}\n\treturn x\n}\n",
        "package main\n\nfunc f(x int) int {\n\tif x <= 0 {\n\t\treturn 0\n\t}\n\treturn x\n}\n",
    ),
    (
        "go",
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("a", 1\n}\n',
        'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("a", 1)\n}\n',
    ),
    (
        "rust",
        "struct P {\n    x: f64;\n    y: f64,\n}\n",
        "struct P {\n    x: f64,\n    y: f64,\n}\n",
    ),
    (
        "rust",
        'fn main() {\n    let v = vec![1, 2;\n    println!("{:?}", v);\n}\n',
        'fn main() {\n    let v = vec![1, 2];\n    println!("{:?}", v);\n}\n',
    ),
    (
        "c",
        "struct node {\n    int value;\n}\n\nint main(void) {\n    return 0;\n}\n",
        "struct node {\n    int value;\n};\n\nint main(void) {\n    return 0;\n}\n",
    ),
    (
        "c",
        "int f(int x) {\n    switch (x) {\n    case 1\n        return 2;\n    }\n"
        "    return 0;\n}\n",
        "int f(int x) {\n    switch (x) {\n    case 1:\n        return 2;\n    }\n"
        "    return 0;\n}\n",
    ),
    (
        "java",
        "class A {\n    int f() {\n        int x = 1\n        return x;\n    }\n}\n",
        "class A {\n    int f() {\n        int x = 1;\n        return x;\n    }\n}\n",
    ),
    (
        "cpp",
        '#include <string>\nint main() {\n    std::string s = "hi;\n    return 0;\n}\n',
        '#include <string>\nint main() {\n    std::string s = "hi";\n    return 0;\n}\n',
    ),
    # A doubled closer that took the opener of a closer further on the line.
    (
        "javascript",
        "function f(c) {\n  if( c.charCodeAt(0)) < 128 ) {\n    return 1;\n  }\n}\n",
        "function f(c) {\n  if( c.charCodeAt(0) < 128 ) {\n    return 1;\n  }\n}\n",
    ),
    # A closer Python says does not match: the list's own closer goes before it, not where it
    # would part a member access the file makes (``[os].path``).
    (
        "python",
        "import os\n\n\ndef f(here):\n    return os.path.exists(here)\n\n\n"
        "dirs = []\ndirs.extend([os.path.join('a', os.pardir), os.curdir)\n",
        "import os\n\n\ndef f(here):\n    return os.path.exists(here)\n\n\n"
        "dirs = []\ndirs.extend([os.path.join('a', os.pardir), os.curdir])\n",
    ),
    # An item of a list of strings that lost its quote took the separator into the string.
    (
        "typescript",
        "const order: string[] = [];\nconsole.log(order, [ '1a', '2a, '2c' ]);\n",
        "const order: string[] = [];\nconsole.log(order, [ '1a', '2a', '2c' ]);\n",
    ),
    # A lost opener joined a name and a literal.
    (
        "python",
        "def f(sock):\n    cert = sock.getpeercertTrue)\n    return cert\n",
        "def f(sock):\n    cert = sock.getpeercert(True)\n    return cert\n",
    ),
    # A lost opener joined a function the file calls (or a comment names as a call) and a name.
    (
        "c",
        "#if defined(A) && defined__B)\nint x;\n#endif\n",
        "#if defined(A) && defined(__B)\nint x;\n#endif\n",
    ),
    (
        "c",
        "int run(void *strm, int action) {\n    // the loop ends when lzma_code() says so\n"
        "    int ret = lzma_codestrm, action);\n    return ret;\n}\n",
        "int run(void *strm, int action) {\n    // the loop ends when lzma_code() says so\n"
        "    int ret = lzma_code(strm, action);\n    return ret;\n}\n",
    ),
]


@pytest.mark.parametrize(("language", "broken", "intended"), CASES)
def test_the_rules_give_what_the_author_meant(language: str, broken: str, intended: str):
    assert_repaired_as_meant(language, broken, intended)


def assert_repaired_as_meant(language: str, broken: str, intended: str) -> None:
    """A golden case: the broken text does not parse, the intended one does, and the rules
    alone make the one into the other."""
    assert check_syntax(language, broken), "the broken text must not parse"
    assert not check_syntax(language, intended), "the intended text must parse"
    assert repaired(language, broken) == intended


def test_two_errors_are_both_repaired():
    broken = "def f(a):\n    if a = 1:\n        return add(a, 2\n    return a\n"
    assert repaired("python", broken) == (
        "def f(a):\n    if a == 1:\n        return add(a, 2)\n    return a\n"
    )


def test_a_closer_goes_where_the_layout_ends_its_block_not_at_the_end_of_the_file():
    broken = "function f() {\n  for (;;) {\n    go();\n  done();\n}\n\nfunction g() {}\n"
    at_end = broken + "}\n"
    assert not check_syntax("javascript", at_end)  # the parser's guess parses too
    (layout,) = [c for c in closer_candidates("javascript", broken) if "    go();\n  }" in c]
    assert layout_mismatches("javascript", layout) < layout_mismatches("javascript", at_end)


def test_invented_arguments_rank_below_punctuation():
    broken = "total = add(1, 2\nprint(total)\n"
    plain = describe("python", broken, "total = add(1, 2)\nprint(total)\n", "rule", 1)
    invented = describe(
        "python", broken, "total = add(1, 2, 3, 4, 5)\nprint(total)\n", "model rewrite", 10
    )
    assert invented.invented == 3 and plain.invented == 0
    assert ranked([invented, plain])[0] is plain


def test_a_removed_name_counts_as_lost_and_loses():
    broken = "x = foo(bar\n"
    dropped = describe("python", broken, "x = foo()\n", "model", 3)
    kept = describe("python", broken, "x = foo(bar)\n", "rule", 1)
    assert dropped.lost == 1 and kept.lost == 0
    assert ranked([dropped, kept])[0] is kept


def test_candidates_that_differ_only_in_layout_are_one_meaning():
    a = describe("javascript", "f(1\n", "f(1)\n", "one", 1)
    b = describe("javascript", "f(1\n", "f(1\n)\n", "two", 2)
    assert len(ranked([a, b])) == 1


def test_a_close_call_needs_two_judged_scores_of_equal_rank():
    a = Candidate("a", "one", score=-3.0)
    b = Candidate("b", "two", score=-3.5)
    far = Candidate("c", "three", score=-9.0)
    assert close_call(a, b)
    assert not close_call(a, far)
    assert not close_call(Candidate("a", "one"), Candidate("b", "two"))
    assert not close_call(a, Candidate("b", "two", invented=1, score=-3.0))


def test_the_toolchain_is_asked_in_rank_order_and_no_further_than_needed(monkeypatch):
    asked: list[str] = []

    def tool_check(language: str, text: str) -> ToolVerdict:
        asked.append(text)
        return ToolVerdict(True, text != "rejected")

    monkeypatch.setattr(rounds, "tool_check", tool_check)
    order = [
        Candidate("rejected", "zero", score=-1.0),
        Candidate("a", "one", score=-3.0),
        Candidate("b", "two", score=-3.2),
        Candidate("c", "three", score=-3.3),
    ]
    best, rival = checked_best("javascript", order)
    assert (best, rival) == (order[1], order[2])
    assert asked == ["rejected", "a", "b"]  # the fourth was never needed


def test_token_change_reads_strings_as_one_token():
    change = token_change("javascript", 'log("a, b);\n', 'log("a", b);\n')
    assert [t.kind for t in change.removed] == ["string"]
    assert change.lost() == 0


def test_the_scanner_skips_comments_and_strings():
    tokens, structure = scan("python", 'x = "(" # )\ny = [1,\n  2]\n')
    assert [t.text for t in tokens if t.kind == "string"] == ['"("']
    assert not structure.unclosed and not structure.unopened
    assert len(structure.pairs) == 1
    _, broken = scan("go", "func f() {\n\ts := `raw\n(`\n")
    assert [b.char for b in broken.unclosed] == ["{"]
