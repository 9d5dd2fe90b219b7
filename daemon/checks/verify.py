"""Verification: does an answer parse, and does it add no error the document did not have?
A completion is judged against the document without it; a repaired one must parse outright.
"""

from __future__ import annotations

from dataclasses import dataclass

from daemon.checks.syntax import Diagnostic, check_syntax, supported_languages

# Python's words for a closing bracket that matches no open one, or not the one open.
_STRAY_CLOSER = ("does not match opening parenthesis", "unmatched ")


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str | None = None
    checked: bool = True  # False when no parser knows the language


def _describe(diagnostic: Diagnostic) -> str:
    return f"line {diagnostic.line + 1}: {diagnostic.message}"


def can_verify(language: str | None) -> bool:
    return language is not None and language in supported_languages()


def _end(text: str) -> tuple[int, int]:
    """The (0-based line, code-point column) just after ``text``."""
    return text.count("\n"), len(text.rsplit("\n", 1)[-1])


def _stray_closer(diagnostic: Diagnostic, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """A closing bracket inside the inserted text that closes nothing or the wrong bracket
    (Python says so exactly): an error the insertion made, whatever else is broken."""
    return (
        diagnostic.source == "python"
        and any(words in diagnostic.message for words in _STRAY_CLOSER)
        and start <= (diagnostic.line, diagnostic.column) <= end
    )


def verify_insertion(language: str | None, prefix: str, inserted: str, suffix: str) -> Verdict:
    """Judge ``inserted`` between ``prefix`` and ``suffix`` against the document without it.

    A completion is inserted into a document that is often mid-edit and already broken, so it
    is judged relative to the original: errors up to the end of the inserted text may not
    outnumber the errors the original had up to the cursor, and no closing bracket the inserted
    text holds may close nothing or the wrong bracket."""
    if not can_verify(language):
        return Verdict(True, f"no parser for {language or 'this language'}: not verified", False)
    assert language is not None
    after = check_syntax(language, prefix + inserted + suffix)
    if not after:
        return Verdict(True)
    start, end = _end(prefix), _end(prefix + inserted)
    stray = [d for d in after if _stray_closer(d, start, end)]
    if stray:
        return Verdict(False, f"it does not parse ({_describe(stray[0])})")
    before = check_syntax(language, prefix + suffix)
    cursor_line, end_line = start[0], end[0]
    introduced = [d for d in after if d.line <= end_line]
    existing = [d for d in before if d.line <= cursor_line]
    if len(introduced) > len(existing):
        return Verdict(False, f"it does not parse ({_describe(introduced[0])})")
    return Verdict(True)


def verify_document(language: str, text: str) -> tuple[Verdict, list[Diagnostic]]:
    """A whole document must parse; the diagnostics say why when it does not."""
    problems = check_syntax(language, text)
    if problems:
        return Verdict(False, f"it does not parse ({_describe(problems[0])})"), problems
    return Verdict(True), []
