"""Python findings from ruff, when ruff is installed, judged on the text alone."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from typing import Any

from daemon.checks.syntax import Diagnostic

log = logging.getLogger(__name__)

# ruff's own default set (pyflakes, and pycodestyle's import, statement and runtime-error rules),
# whatever the workspace selects: no line-length or layout rules, which a formatter settles and
# which would drown what matters (an undefined or unbound name in a fix that parses).
RULES = "E4,E7,E9,F"
# Undefined names: a bug in any workspace, whatever linter it chose.
UNDEFINED_NAME = "F821"
STDIN_NAME = "snippet.py"
# ruff refuses line lengths above this.
MAX_RUFF_LINE_LENGTH = 320
# ruff names a syntax error "invalid-syntax" now; older releases said E999 or gave no code.
SYNTAX_ERROR_CODE = "invalid-syntax"


@functools.lru_cache(maxsize=1)
def _find_ruff() -> str | None:
    try:
        from ruff.__main__ import find_ruff_bin  # the wheel's own lookup, beside this Python

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError, OSError):
        pass
    return shutil.which("ruff")


def ruff_path() -> str | None:
    """The ruff binary to run, or None when ruff is not installed."""
    path = _find_ruff()
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    return None


# The text goes in on stdin, the process works in a fresh temporary directory, and no configuration
# file is read (``--isolated``): the findings depend on the text only, and no file of the user's is
# read or written.
def run_tool(
    argv: Sequence[str],
    text: str,
    timeout: float,
    ok: Sequence[int] = (0,),
    cwd: str | None = None,
) -> str | None:
    """Run ``argv`` with ``text`` on stdin, in ``cwd`` or else an empty temporary directory.

    Returns its stdout: None when it cannot start, runs past ``timeout`` seconds (it is
    killed), exits with a status not in ``ok``, or prints something other than UTF-8.
    Never raises.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: no tool can take this text
        return None
    try:
        # Never the user's directory: tools look for configuration where they run.
        place = tempfile.TemporaryDirectory(prefix="assist-tool-") if cwd is None else None
        with place or contextlib.nullcontext(cwd) as workdir:
            done = subprocess.run(
                list(argv),
                input=data,
                capture_output=True,
                cwd=workdir,
                timeout=timeout,
                check=False,
            )
    except subprocess.TimeoutExpired:
        log.debug("%s timed out after %.1fs", argv[0], timeout)
        return None
    except OSError as exc:
        log.debug("cannot run %s: %s", argv[0], exc)
        return None
    if done.returncode not in ok:
        log.debug(
            "%s exited %d: %s",
            argv[0],
            done.returncode,
            done.stderr[:500].decode("utf-8", "replace"),
        )
        return None
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _position(location: Any) -> tuple[int, int] | None:
    if not isinstance(location, dict):
        return None
    row, column = location.get("row"), location.get("column")
    if not isinstance(row, int) or not isinstance(column, int):
        return None
    return max(row - 1, 0), max(column - 1, 0)  # ruff counts from 1, in characters


def _finding(item: Any) -> Diagnostic | None:
    if not isinstance(item, dict):
        return None
    start = _position(item.get("location"))
    if start is None:
        return None
    end = _position(item.get("end_location"))
    if end is None or end < start:
        end = start
    code = item.get("code")
    if code in (None, "E999"):
        code = SYNTAX_ERROR_CODE
    message = item.get("message")
    return Diagnostic(
        line=start[0],
        column=start[1],
        end_line=end[0],
        end_column=end[1],
        message=str(message) if message else str(code),
        source="ruff",
        code=str(code),
    )


def lint_python(
    text: str, line_length: int | None = None, timeout: float = 5.0, rules: str = RULES
) -> list[Diagnostic] | None:
    """ruff's findings in ``text`` (of ``rules``), in document order; None when ruff is missing
    or failed.

    A syntax error comes back as one finding with code ``SYNTAX_ERROR_CODE`` (ruff then skips
    the other rules that need a syntax tree).
    """
    binary = ruff_path()
    if binary is None:
        return None
    argv = [binary, "check", "--isolated", "--no-cache", "--select", rules]
    argv += ["--output-format", "json", "--stdin-filename", STDIN_NAME]
    if line_length is not None and 1 <= line_length <= MAX_RUFF_LINE_LENGTH:
        argv += ["--line-length", str(line_length)]
    argv.append("-")
    # Exit status 1 means "found something": the output is just as good.
    output = run_tool(argv, text, timeout, ok=(0, 1))
    if output is None:
        return None
    try:
        items = json.loads(output)
    except ValueError:
        log.debug("ruff printed no JSON: %.200s", output)
        return None
    if not isinstance(items, list):
        return None
    found = [d for d in (_finding(item) for item in items) if d is not None]
    return sorted(found, key=lambda d: (d.line, d.column, d.code or ""))


def undefined_names(text: str) -> list[Diagnostic] | None:
    """ruff's undefined-name findings (F821) in ``text``; None when ruff is missing."""
    return lint_python(text, rules=UNDEFINED_NAME)
