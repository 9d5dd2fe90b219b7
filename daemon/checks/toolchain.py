"""The language's own checker, when the machine has it: a second opinion on a repaired file."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import xxhash

from daemon.checks.c_gaps import c_gaps
from daemon.checks.resident import ResidentChecker
from daemon.checks.syntax import Diagnostic, check_syntax
from daemon.checks.typescript import typescript_command

CHECK_TIMEOUT_S = 5.0
# Verdicts remembered, by language and the text's hash.
_VERDICTS_KEPT = 256
_MESSAGE_CHARS = 200


@dataclass(frozen=True)
class Checker:
    """How to ask one language's own tool whether a text parses (the text on its stdin)."""

    program: str
    args: tuple[str, ...]


_CHECKERS: dict[str, Checker] = {
    "go": Checker("gofmt", ("-e",)),
    "rust": Checker("rustfmt", ("--edition", "2021", "--emit", "stdout")),
}


@dataclass(frozen=True)
class ToolVerdict:
    """What the language's checker said; ``ran`` is False when there was none to ask."""

    ran: bool
    ok: bool = True
    tool: str | None = None
    message: str | None = None
    line: int | None = None  # 0-based, where the checker names a place
    column: int | None = None  # 0-based code points


_HERE = Path(__file__).resolve().parent
_VERDICTS: OrderedDict[tuple[str, str], ToolVerdict] = OrderedDict()
_VERDICTS_LOCK = threading.Lock()


def _javascript_command() -> list[str] | None:
    if shutil.which("node") is None:
        return None
    return ["node", "--experimental-vm-modules", str(_HERE / "javascript_syntax.js")]


def _java_command() -> list[str] | None:
    if shutil.which("java") is None or shutil.which("javac") is None:
        return None  # a runtime without the compiler (javac ships with it) cannot parse
    return ["java", "-XX:TieredStopAtLevel=1", "-Xshare:auto", str(_HERE / "JavaSyntax.java")]


# Checkers kept running, by language, and the name their verdicts give.
_RESIDENT: dict[str, tuple[str, ResidentChecker]] = {
    "javascript": ("node", ResidentChecker("node's parser", _javascript_command)),
    "typescript": (
        "tsc",
        ResidentChecker("TypeScript's parser", lambda: typescript_command("ts")),
    ),
    "typescriptreact": (
        "tsc",
        ResidentChecker("TypeScript's parser (TSX)", lambda: typescript_command("tsx")),
    ),
    "java": ("javac", ResidentChecker("javac's parser", _java_command)),
}


# tree-sitter's grammars are tolerant in places where the language's own parser is not (and the
# other way round), so a text the grammar accepts is also given to the toolchain's checker: ``gofmt
# -e`` for Go, ``rustfmt`` for Rust, and, kept running (resident.py), V8's parser under node for
# JavaScript, the TypeScript compiler's parser (typescript.py) and javac's parser for Java. A
# checker is used if present and never required: a missing one, or one that does not answer within
# its time, leaves the grammar's verdict alone. The last verdicts are remembered by the text's
# hash. C has no checker here (gcc needs the headers the file includes); c_gaps finds the slips its
# grammar reads as code.
def checker_for(language: str) -> Checker | None:
    """The language's checker when it is installed on this machine."""
    checker = _CHECKERS.get(language)
    if checker is None or shutil.which(checker.program) is None:
        return None
    return checker


def tool_check(language: str, text: str) -> ToolVerdict:
    """Ask the language's own checker about ``text``; ``ran=False`` when there is none. A
    repair asks about the same text more than once (its round's start, its candidates, the
    best of them): the last verdicts are remembered by the text's hash."""
    key = (language, xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass")))
    with _VERDICTS_LOCK:
        known = _VERDICTS.get(key)
        if known is not None:
            _VERDICTS.move_to_end(key)
            return known
    verdict = _ask(language, text)
    if verdict.ran:
        with _VERDICTS_LOCK:
            _VERDICTS[key] = verdict
            while len(_VERDICTS) > _VERDICTS_KEPT:
                _VERDICTS.popitem(last=False)
    return verdict


def _ask(language: str, text: str) -> ToolVerdict:
    if language in _RESIDENT:
        tool, resident = _RESIDENT[language]
        answer = resident.check(text)
        if answer is None:
            return ToolVerdict(False)
        return ToolVerdict(True, answer.ok, tool, answer.message, answer.line, answer.column)
    checker = checker_for(language)
    if checker is None:
        return ToolVerdict(False)
    try:
        done = _run([checker.program, *checker.args], text)
    except (OSError, subprocess.TimeoutExpired):
        return ToolVerdict(False)
    if done.returncode == 0:
        return ToolVerdict(True, True, checker.program)
    line, column = _place(done.stderr)
    return ToolVerdict(True, False, checker.program, _first_line(done.stderr), line, column)


def syntax_problems(language: str, text: str, tool: bool = True) -> list[Diagnostic]:
    """The grammar's syntax errors; where it has none, the slips C's grammar reads as code
    (``c_gaps``), then (with ``tool``) the language checker's objection."""
    found = check_syntax(language, text)
    if not found and language == "c":
        found = c_gaps(text)
    if not found and tool:
        rejected = tool_diagnostic(language, text)
        found = [rejected] if rejected is not None else []
    return found


# Where the checker rejects a text the grammar accepts (node refuses ``a = b`` where ``a`` is not
# assignable; tree-sitter does not), its message and the place it names become a diagnostic that a
# repair can target.
def tool_diagnostic(language: str, text: str) -> Diagnostic | None:
    """The checker's objection to ``text`` as a diagnostic, or None when it accepts the text
    (or there is no checker). Without a place in its message, the diagnostic is at the start."""
    verdict = tool_check(language, text)
    if verdict.ok:
        return None
    lines = text.split("\n")
    line = min(verdict.line or 0, max(0, len(lines) - 1))
    column = min(verdict.column or 0, len(lines[line]))
    message = f"{verdict.tool} rejects the file: {verdict.message}"
    return Diagnostic(line, column, line, len(lines[line]), message, verdict.tool or language)


def _run(command: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=CHECK_TIMEOUT_S,
        check=False,
    )


# "<stdin>:3:5" (gofmt, rustfmt's "--> <stdin>:3:5").
_LINE_COLUMN = re.compile(r"<(?:stdin|standard input)>:(\d+):(\d+)")


def _place(stderr: str) -> tuple[int | None, int | None]:
    """The 0-based line and column a checker's message names, where it names one."""
    found = _LINE_COLUMN.search(stderr)
    if found:
        return int(found.group(1)) - 1, int(found.group(2)) - 1
    return None, None


def _first_line(stderr: str) -> str:
    """The checker's message: its first line that names an error, shortened."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    named = [line for line in lines if "error" in line.lower()]
    shown = (named or lines or ["it rejects the file"])[0]
    return shown[:_MESSAGE_CHARS]
