"""ruff findings through daemon.checks.lint, with the real ruff binary."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.checks import lint
from daemon.checks.lint import SYNTAX_ERROR_CODE, lint_python, ruff_path

needs_ruff = pytest.mark.skipif(ruff_path() is None, reason="ruff is not installed")


@needs_ruff
def test_undefined_name() -> None:
    text = (
        'greeting = "héllo wörld"; print(greeting)\n\n\ndef main():\n    return undefined_thing\n'
    )
    diagnostics = lint_python(text)
    assert diagnostics is not None
    [f821] = [d for d in diagnostics if d.code == "F821"]
    assert (f821.line, f821.column, f821.end_line, f821.end_column) == (4, 11, 4, 26)
    assert "undefined_thing" in f821.message and f821.source == "ruff"


@needs_ruff
def test_columns_are_code_points() -> None:
    [d] = lint_python('s = "é😀é" + nope\n') or []
    assert d.code == "F821" and d.column == len('s = "é😀é" + ')


@needs_ruff
def test_clean_code_has_no_findings() -> None:
    text = "import sys\n\n\ndef main() -> int:\n    print(sys.argv)\n    return 0\n"
    assert lint_python(text) == []
    assert lint_python("") == []


@needs_ruff
def test_only_rules_that_mean_wrong_code() -> None:
    text = (
        "import os, sys\ntry:\n    x = os.sep + sys.platform + '"
        + "y" * 200
        + "'\nexcept:\n    pass\n"
    )
    codes = [d.code for d in lint_python(text, line_length=88) or []]
    assert codes == ["E401", "E722"]  # no E501 for the long line: layout is the formatter's


@needs_ruff
def test_syntax_error_is_one_finding() -> None:
    diagnostics = lint_python("def f(:\n    return undefined\n")
    assert diagnostics
    assert all(d.code == SYNTAX_ERROR_CODE for d in diagnostics)


@needs_ruff
def test_user_configuration_is_never_read_or_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A configuration that would ignore F821 and ask for docstrings, where the process runs.
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["D"]\nignore = ["F"]\n')
    (tmp_path / "snippet.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    codes = [d.code for d in lint_python("def f():\n    return nope\n") or []]
    assert codes == ["F821"]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no cache, no file


def test_no_ruff_means_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint, "ruff_path", lambda: None)
    assert lint_python("print(nope)\n") is None


@pytest.mark.parametrize("binary", ["/bin/false", "/nonexistent/ruff"])
def test_a_failing_ruff_means_none(monkeypatch: pytest.MonkeyPatch, binary: str) -> None:
    monkeypatch.setattr(lint, "ruff_path", lambda: binary)
    assert lint_python("print(nope)\n") is None


@needs_ruff
def test_timeout_means_none() -> None:
    assert lint_python("x = 1\n" * 1000, timeout=1e-6) is None


@needs_ruff
def test_text_no_tool_can_take_means_none() -> None:
    assert lint_python("x = '\ud800'\n") is None  # a lone surrogate has no UTF-8


@needs_ruff
def test_out_of_range_line_length_is_ignored() -> None:
    assert lint_python("x = 1\n", line_length=1000) == []
