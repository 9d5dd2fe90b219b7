"""Formatting through daemon.checks.formatting, with the real ruff (and black, when installed)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from daemon.checks import lint
from daemon.checks.formatting import FORMATTERS, format_code

needs_ruff = pytest.mark.skipif(lint.ruff_path() is None, reason="ruff is not installed")
HAVE_BLACK = importlib.util.find_spec("black") is not None or shutil.which("black") is not None
needs_black = pytest.mark.skipif(not HAVE_BLACK, reason="black is not installed")

UGLY = "def total(items,tax = 0.2):\n  return sum( i.price for i in items )*(1+tax)\n"
PRETTY = "def total(items, tax=0.2):\n    return sum(i.price for i in items) * (1 + tax)\n"
LIST = "ports = [8000, 8001, 8002, 8003]\n"


@needs_ruff
def test_ruff_formats() -> None:
    assert format_code(UGLY, "python", ["ruff"]) == (PRETTY, "ruff")


@needs_ruff
def test_ruff_honours_the_line_length() -> None:
    assert format_code(LIST, "python", ["ruff"], line_length=100) == (LIST, "ruff")
    narrow = format_code(LIST, "python", ["ruff"], line_length=20)
    assert narrow == ("ports = [\n    8000,\n    8001,\n    8002,\n    8003,\n]\n", "ruff")
    # Wider than ruff allows: formatted at the widest it allows, not refused.
    assert format_code(LIST, "python", ["ruff"], line_length=1000) == (LIST, "ruff")


@needs_ruff
def test_text_that_does_not_parse_gives_none() -> None:
    assert format_code("def f(:\n    return 1\n", "python", ["ruff"]) is None
    assert format_code("x = '\ud800'\n", "python", ["ruff"]) is None
    assert format_code("a\x00b\n", "python", ["ruff"]) is None


@needs_ruff
def test_user_configuration_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ruff]\nline-length = 20\n[tool.ruff.format]\nquote-style = 'single'\n"
        "[tool.black]\nline-length = 20\n"
    )
    monkeypatch.chdir(tmp_path)
    text = 'name = "a"\n' + LIST
    assert format_code(text, "python", ["ruff"]) == (text, "ruff")
    if HAVE_BLACK:
        assert format_code(text, "python", ["black"]) == (text, "black")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]


@needs_ruff
def test_timeout_gives_none() -> None:
    assert format_code(UGLY * 200, "python", ["ruff"], timeout=1e-6) is None


def test_no_configured_formatter_gives_none() -> None:
    assert format_code(UGLY, "python", []) is None
    assert format_code(UGLY, "python", ["prettier", "eslint"]) is None


def test_unsupported_language_gives_none() -> None:
    assert format_code("let x  =  1;\n", "javascript", ["ruff", "black", "prettier"]) is None
    assert format_code("fn main() {}\n", "rust", ["rustfmt"]) is None
    assert format_code("x", "", ["ruff"]) is None


def test_formatter_not_installed_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint, "ruff_path", lambda: None)
    assert format_code(UGLY, "python", ["ruff"]) is None


@needs_black
def test_black_formats_when_configured() -> None:
    assert format_code(UGLY, "python", ["black"]) == (PRETTY, "black")
    narrow = format_code(LIST, "python", ["black"], line_length=20)
    assert narrow == ("ports = [\n    8000,\n    8001,\n    8002,\n    8003,\n]\n", "black")
    assert format_code("def f(:\n", "python", ["black"]) is None


@needs_ruff
def test_ruff_first_when_both_are_configured() -> None:
    assert format_code(UGLY, "python", ["black", "ruff"]) == (PRETTY, "ruff")


@needs_black
def test_black_when_ruff_is_configured_but_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lint, "ruff_path", lambda: None)
    assert format_code(UGLY, "python", ["ruff", "black"]) == (PRETTY, "black")


def test_formatters_are_registered_by_tool_name() -> None:
    assert list(FORMATTERS) == ["ruff", "black"]
    for name, formatter in FORMATTERS.items():
        assert formatter.name == name and "python" in formatter.languages
