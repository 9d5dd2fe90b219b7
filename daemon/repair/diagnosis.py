"""What is wrong with a document, and how a repair is judged.
``diagnose`` finds the problems, ``accepts`` says whether a candidate is progress.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from daemon.checks.lint import lint_python
from daemon.checks.names import misspelt_names, names_checked
from daemon.checks.syntax import Diagnostic
from daemon.checks.toolchain import syntax_problems, tool_check, tool_diagnostic
from daemon.protocol import DiagnosticInfo, Span


@dataclass
class Problems:
    syntax: list[Diagnostic]
    lint: list[Diagnostic] | None  # None: not linted (no ruff, or not a ruff workspace)
    complete: bool = True  # False: misspelt names were not looked for (``diagnose(names=)``)
    # False: the grammar found nothing and the language's checker was not asked yet
    # (``diagnose(tool=)``; ``with_tool`` asks it).
    tool_checked: bool = True

    @property
    def all(self) -> list[Diagnostic]:
        return self.syntax + (self.lint or [])

    @property
    def targets(self) -> list[Diagnostic]:
        """What a round repairs: syntax errors first; lint findings only in a parsing file."""
        return self.syntax or (self.lint or [])


def info(d: Diagnostic) -> DiagnosticInfo:
    return DiagnosticInfo(
        line=d.line,
        column=d.column,
        end_line=d.end_line,
        end_column=d.end_column,
        message=d.message,
        source=d.source,
        code=d.code,
    )


def diagnose(
    language: str,
    text: str,
    use_ruff: bool,
    line_length: int | None,
    names: bool = True,
    tool: bool = True,
) -> Problems:
    """The problems of ``text``: syntax errors from a real parser; where the grammar accepts
    the file, the objection of the language's own checker when one is installed; and ruff's
    findings for Python in a ruff workspace, and in any other the undefined names one slip from
    a name the file has, when ruff is installed.

    ``names=False`` skips looking for misspelt names outside a ruff workspace (a candidate of a
    syntax round, whose lint is not compared); ``tool=False`` leaves the language's checker for
    later (``with_tool``), where the grammar finds nothing."""
    # A file the grammar accepts may still be broken: the checker has the last word.
    syntax = syntax_problems(language, text, tool)
    checked = tool or bool(syntax)
    lint = None
    if use_ruff and not syntax:
        lint = lint_python(text, line_length)
    elif names_checked(language) and not syntax:
        if not names:
            return Problems(syntax, None, complete=False, tool_checked=checked)
        # A misspelt name is a bug whatever the workspace lints.
        lint = misspelt_names(text, language)
    return Problems(syntax, lint, tool_checked=checked)


def with_tool(language: str, text: str, problems: Problems) -> Problems:
    """``problems`` of ``text`` with the language checker's objection, where it was left for
    later (``diagnose(tool=False)``)."""
    if problems.tool_checked:
        return problems
    rejected = tool_diagnostic(language, text)
    return replace(problems, syntax=[rejected] if rejected else [], tool_checked=True)


def anchored(language: str, text: str, problems: Problems) -> Problems:
    """The round's problems with the language checker's first error put first, where the
    grammar's first error comes after it or spans many lines around it.

    tree-sitter recovers where it can and reports where recovery failed: an unterminated
    Java string, or a TypeScript enum member that lost its comma, can surface a hundred lines
    below the slip, or as one error over the whole file. The checker stops at the slip."""
    if not problems.syntax or problems.syntax[0].source != "tree-sitter":
        return problems
    verdict = tool_check(language, text)
    if verdict.ok or verdict.line is None:
        return problems
    first = problems.syntax[0]
    lines = text.split("\n")
    line = min(verdict.line, len(lines) - 1)
    wide = first.end_line - first.line > 2 and first.line <= line <= first.end_line
    if line >= first.line and not wide:
        return problems
    column = min(verdict.column or 0, len(lines[line]))
    message = f"{verdict.tool} rejects the file: {verdict.message}"
    placed = Diagnostic(line, column, line, column, message, verdict.tool or language)
    return Problems([placed, *problems.syntax], problems.lint, problems.complete)


def choose_span(lines: list[str], problem: Diagnostic, max_lines: int) -> Span:
    """The lines a candidate replaces: the problem's lines and one line of context around."""
    start = max(0, problem.line - 1)
    end = min(len(lines), max(problem.end_line, problem.line) + 2)
    end = min(end, start + max_lines)
    return Span(start_line=start, end_line=max(end, start + 1))


def shared_ends(old: str, new: str) -> tuple[int, int]:
    """How many characters two texts share at their start, and then at their end."""
    start = _common_length(old, new, lambda text, n: text[:n])
    rest_old, rest_new = old[start:], new[start:]
    return start, _common_length(rest_old, rest_new, lambda text, n: text[len(text) - n :])


def _trim_common(old: str, new: str) -> tuple[str, str]:
    """The parts of two texts between their common start and common end."""
    start, end = shared_ends(old, new)
    rest_old, rest_new = old[start:], new[start:]
    return rest_old[: len(rest_old) - end], rest_new[: len(rest_new) - end]


def _common_length(a: str, b: str, part: Callable[[str, int], str]) -> int:
    """The longest n with part(a, n) == part(b, n), by bisection (slices compare in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if part(a, middle) == part(b, middle):
            low = middle
        else:
            high = middle - 1
    return low


def change_size(old: str, new: str) -> int:
    """Characters inserted plus deleted: the measure of a small fix.

    The texts are whole files that differ in a few lines: only the differing middle is
    compared (a character-level diff of two large files would take quadratic time)."""
    old, new = _trim_common(old, new)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def unified_diff(old: str, new: str, path: str | None) -> str:
    name = path or "document"
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )


def _lint_counts(problems: list[Diagnostic] | None) -> Counter[str]:
    return Counter((p.code or p.message) for p in problems or [])


def accepts(before: Problems, after: Problems) -> bool:
    """A round's candidate is progress: the error it targets is gone, nothing broke before it,
    and (where the parser reports every error) fewer remain; lint findings may not grow."""
    if after.syntax:
        if not before.syntax:
            return False
        target = before.syntax[0]
        # Python's compiler (like the toolchains' checkers) reports only the first error: one
        # on a later line is the next round's (one later on the same line is most often the
        # same error, moved). tree-sitter reports them all: none may come before the target,
        # and fewer remain.
        if all(p.source != "tree-sitter" for p in after.syntax):
            if after.syntax[0].line <= target.line:
                return False
        else:
            anchor = (target.line, target.column)
            earlier = any((p.line, p.column) <= anchor for p in after.syntax)
            if earlier or len(after.syntax) >= len(before.syntax):
                return False
    if before.lint is not None and after.lint is not None:
        grew = _lint_counts(after.lint) - _lint_counts(before.lint)
        if grew:
            return False
        if not before.syntax and len(after.lint) >= len(before.lint):
            return False
    return True
