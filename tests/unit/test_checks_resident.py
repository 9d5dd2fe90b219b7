"""The checkers kept running: V8's parser and TypeScript's under node and javac's parser in
one JVM, as a repair's verification and diagnosis use them (real processes; skipped where the
machine lacks the tool), and a checker that hangs, dies or cannot start, which leaves the
grammar's verdict."""

from __future__ import annotations

import shutil
import sys

import pytest

from daemon.checks import resident
from daemon.checks.resident import ResidentChecker
from daemon.checks.syntax import check_syntax
from daemon.checks.toolchain import tool_check
from daemon.checks.typescript import typescript_compiler
from daemon.repair.diagnosis import diagnose
from tests.unit.test_repair_rules import repaired

needs_typescript = pytest.mark.skipif(
    typescript_compiler() is None, reason="no TypeScript compiler (build editors/vscode first)"
)
needs_javac = pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK")
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@needs_node
def test_javascript_is_parsed_as_node_reads_a_file():
    # A CommonJS body (a top-level return, a hashbang line) and an ECMAScript module both parse.
    for text in ("#!/usr/bin/env node\nreturn 1;\n", 'import x from "y";\nexport const a = x;\n'):
        assert tool_check("javascript", text).ok, text
    verdict = tool_check("javascript", "function f(a) {\n  if (a = 1 = 2) {}\n}\n")
    assert (verdict.ok, verdict.tool, verdict.line, verdict.column) == (False, "node", 1, 10)
    assert "Invalid left-hand side in assignment" in (verdict.message or "")
    # A broken module is rejected too (``node --check`` lets a .js module through unread).
    assert not tool_check("javascript", 'import x from "y";\nexport const a = ;\n').ok


@needs_typescript
def test_typescript_parse_errors_are_placed_where_the_compiler_says():
    verdict = tool_check("typescript", "function f(a: number) {\n  return a +;\n}\n")
    assert (verdict.ran, verdict.ok, verdict.tool) == (True, False, "tsc")
    assert (verdict.line, verdict.column) == (1, 12)
    assert verdict.message is not None and verdict.message.startswith("TS1109")
    assert tool_check("typescript", "export const f = (a: number): number => a + 1;\n").ok


@needs_typescript
def test_typescript_that_only_the_javascript_engine_rejects_is_rejected_on_its_line():
    # The TypeScript parser leaves an assignment to a non-reference to its type checker.
    broken = "const pairs = [];\nconst add = (a, b) = a + b;\n"
    assert not check_syntax("typescript", broken)
    verdict = tool_check("typescript", broken)
    assert not verdict.ok and (verdict.line, verdict.column) == (1, 12)
    assert "Invalid left-hand side" in (verdict.message or "")
    found = diagnose("typescript", broken, False, None).syntax
    assert [(d.line, d.source) for d in found] == [(1, "tsc")]
    assert repaired("typescript", broken) == broken.replace("b) = a", "b) => a")


@needs_typescript
def test_tsx_is_parsed_as_tsx():
    assert tool_check("typescriptreact", 'const a = <div className="x">{1}</div>;\n').ok
    assert not tool_check("typescriptreact", "const a = <div>{1}</span>;\n").ok


@needs_typescript
def test_a_typescript_repair_is_offered_only_when_the_compiler_accepts_it():
    broken = "function f(items: string[]) {\n  return items.map((s, i) = s.trim());\n}\n"
    assert repaired("typescript", broken) == broken.replace("i) = s", "i) => s")


@needs_javac
def test_java_parse_errors_are_placed_where_javac_says():
    broken = "class A {\n  int f() {\n    int x = 1\n    return x;\n  }\n}\n"
    verdict = tool_check("java", broken)
    assert (verdict.ran, verdict.ok, verdict.tool) == (True, False, "javac")
    assert (verdict.line, verdict.column) == (2, 13)
    assert verdict.message == "';' expected"
    assert tool_check("java", broken.replace("= 1\n", "= 1;\n")).ok
    # Only the parser runs: names it cannot resolve are not its business.
    assert tool_check("java", "class B extends Missing { Unknown u = make(); }\n").ok


@needs_javac
def test_java_that_the_grammar_accepts_but_javac_rejects_is_not_called_clean():
    broken = "class A {\n  void f() {\n    int[] a = new int[];\n  }\n}\n"
    assert not tool_check("java", broken).ok
    assert diagnose("java", broken, False, None).syntax


def test_a_checker_that_hangs_is_stopped_and_the_grammar_decides(monkeypatch):
    monkeypatch.setattr(resident, "START_TIMEOUT_S", 0.5)
    hangs = ResidentChecker(
        "sleeper", lambda: [sys.executable, "-c", "import time; time.sleep(60)"]
    )
    assert hangs.check("x = 1\n") is None
    assert hangs._process is None  # stopped; the next request starts it again
    hangs.close()


def test_a_checker_that_answers_nonsense_or_dies_gives_no_verdict():
    nonsense = ResidentChecker("nonsense", lambda: [sys.executable, "-c", "print('hello')"])
    assert nonsense.check("x\n") is None
    assert nonsense._process is None  # out of step with its requests: started afresh next time
    dies = ResidentChecker("dies", lambda: [sys.executable, "-c", "raise SystemExit(3)"])
    assert dies.check("x\n") is None
    missing = ResidentChecker("missing", lambda: ["/nonexistent/checker"])
    assert missing.check("x\n") is None and not missing.available()


def test_a_checker_answers_one_text_after_another_in_one_process():
    echo = (
        "import sys, json\n"
        "while True:\n"
        "    size = sys.stdin.buffer.readline()\n"
        "    if not size: break\n"
        "    text = sys.stdin.buffer.read(int(size)).decode()\n"
        "    ok = 'bad' not in text\n"
        "    print(json.dumps({'ok': ok, 'offset': text.find('bad'), 'message': 'bad'}), "
        "flush=True)\n"
    )
    checker = ResidentChecker("echo", lambda: [sys.executable, "-c", echo])
    assert checker.check("fine\n") == resident.Answer(True)
    first = checker._process
    assert checker.check("line one\n  é bad\n") == resident.Answer(False, 1, 4, "bad")
    assert checker._process is first
    checker.close()


@needs_typescript
def test_typescript_with_parameter_decorators_is_valid():
    # As VS Code's and xterm's sources write services: the decorators must not be left in the
    # JavaScript that V8 is given.
    text = (
        "class Linkifier {\n"
        "  constructor(@IBufferService private readonly _buffer: IBufferService) {}\n"
        "}\n"
    )
    assert tool_check("typescript", text).ok
