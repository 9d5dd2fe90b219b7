"""Verification: does an answer parse, and does it add no error the document did not have?

A completion is inserted into a document that is often mid-edit and already broken, so it is
judged relative to the original: errors up to the end of the inserted text may not outnumber
the errors the original had up to the cursor. A repaired document must parse outright.
"""

from __future__ import annotations

from dataclasses import dataclass

from daemon.checks.syntax import Diagnostic, check_syntax, supported_languages


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str | None = None
    checked: bool = True  # False when no parser knows the language


def _describe(diagnostic: Diagnostic) -> str:
    return f"line {diagnostic.line + 1}: {diagnostic.message}"


def can_verify(language: str | None) -> bool:
    return language is not None and language in supported_languages()


def verify_insertion(language: str | None, prefix: str, inserted: str, suffix: str) -> Verdict:
    """Judge ``inserted`` between ``prefix`` and ``suffix`` against the document without it."""
    if not can_verify(language):
        return Verdict(True, f"no parser for {language or 'this language'}: not verified", False)
    assert language is not None
    after = check_syntax(language, prefix + inserted + suffix)
    if not after:
        return Verdict(True)
    before = check_syntax(language, prefix + suffix)
    cursor_line = prefix.count("\n")
    end_line = cursor_line + inserted.count("\n")
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
