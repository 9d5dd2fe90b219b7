"""Verification of completions (relative to the document) and of repaired documents."""

from __future__ import annotations

from daemon.checks.verify import verify_document, verify_insertion


def test_an_insertion_that_completes_the_code_passes():
    assert verify_insertion("python", "def f():\n    return ", "1\n", "").ok


def test_an_insertion_that_breaks_the_code_fails_with_the_line():
    verdict = verify_insertion("python", "def f():\n    return ", "(1\n", "")
    assert not verdict.ok and "line" in (verdict.reason or "")


def test_errors_after_the_insertion_that_were_there_before_do_not_count():
    suffix = "\n\nif (:\n"
    assert verify_insertion("python", "x = ", "1", suffix).ok


def test_unknown_languages_pass_unchecked():
    verdict = verify_insertion("lua", "local x = ", "1", "")
    assert verdict.ok and not verdict.checked and "no parser" in (verdict.reason or "")


def test_documents_must_parse():
    ok, problems = verify_document("go", "package main\n\nfunc main() {}\n")
    assert ok.ok and problems == []
    bad, problems = verify_document("go", "package main\n\nfunc main() {\n")
    assert not bad.ok and problems


def test_a_closer_the_insertion_writes_for_the_wrong_bracket_fails():
    """The call left open at the cursor is already an error on the cursor's line; a `}` that
    closes its `(` is a new one there, though the count of errors stays one."""
    prefix = "def f(cookies):\n    c = Cookies("
    suffix = "\n    t = Timeout(1)\n"
    verdict = verify_insertion("python", prefix, "cookies}", suffix)
    assert not verdict.ok and "does not match" in (verdict.reason or "")
    assert not verify_insertion("python", prefix, "cookies))", suffix).ok  # closes nothing
    assert verify_insertion("python", prefix, "cookies)", suffix).ok
    # Left open, as the document was: no new error.
    assert verify_insertion("python", prefix, "cookies", suffix).ok
    # A stray closer of the code after the cursor is not the insertion's.
    assert verify_insertion("python", "x = f(", "a", ")\n)\n").ok
