"""The language's own checker, when the machine has it: a second opinion on a repaired file.

tree-sitter's grammars are tolerant in places where the language's own parser is not (and the
other way round), so a repair that the grammar accepts is also given to the checker that ships
with the language's toolchain, when that is installed: ``node --check`` for JavaScript,
``gofmt -e`` for Go, ``rustfmt`` for Rust. A checker is used if present and never required: a
missing one, or one that does not answer within its time, leaves the grammar's verdict alone.
The text goes to a fresh temporary file (or stdin); no path a request names is ever opened.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

CHECK_TIMEOUT_S = 5.0
_MESSAGE_CHARS = 200


@dataclass(frozen=True)
class Checker:
    """How to ask one language's own tool whether a text parses."""

    program: str
    args: tuple[str, ...]
    suffix: str | None  # the text goes in a temporary file with this suffix; None: stdin


_CHECKERS: dict[str, Checker] = {
    "javascript": Checker("node", ("--check",), ".js"),
    "go": Checker("gofmt", ("-e",), None),
    "rust": Checker("rustfmt", ("--edition", "2021", "--emit", "stdout"), None),
}


@dataclass(frozen=True)
class ToolVerdict:
    """What the language's checker said; ``ran`` is False when there was none to ask."""

    ran: bool
    ok: bool = True
    tool: str | None = None
    message: str | None = None


def checker_for(language: str) -> Checker | None:
    """The language's checker when it is installed on this machine."""
    checker = _CHECKERS.get(language)
    if checker is None or shutil.which(checker.program) is None:
        return None
    return checker


def tool_check(language: str, text: str) -> ToolVerdict:
    """Ask the language's own checker about ``text``; ``ran=False`` when there is none."""
    checker = checker_for(language)
    if checker is None:
        return ToolVerdict(False)
    try:
        if checker.suffix is None:
            done = _run([checker.program, *checker.args], text)
        else:
            with tempfile.TemporaryDirectory(prefix="assist-check-") as folder:
                path = os.path.join(folder, "candidate" + checker.suffix)
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(text)
                done = _run([checker.program, *checker.args, path], None)
    except (OSError, subprocess.TimeoutExpired):
        return ToolVerdict(False)
    if done.returncode == 0:
        return ToolVerdict(True, True, checker.program)
    return ToolVerdict(True, False, checker.program, _first_line(done.stderr))


def _run(command: list[str], stdin: str | None) -> subprocess.CompletedProcess[str]:
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


def _first_line(stderr: str) -> str:
    """The checker's message: its first line that names an error, shortened."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    named = [line for line in lines if "error" in line.lower()]
    shown = (named or lines or ["it rejects the file"])[0]
    return shown[:_MESSAGE_CHARS]
