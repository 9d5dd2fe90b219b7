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
