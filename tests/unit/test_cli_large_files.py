"""A 50 MB file: `assist fix` refuses it with what to do, `assist complete` sends a window.

No daemon is needed: fix refuses the file before it asks one, and the completion request is
built in process (the e2e test sends it to a real daemon).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.cli.complete import build_request
from daemon.client.launcher import free_port
from daemon.client.window import WINDOW_CHARS
from daemon.settings import load_settings

ASSIST = [sys.executable, "-m", "daemon.cli"]
ROOT = Path(__file__).resolve().parents[2]
SIZE = 50 * 1024 * 1024


def write_large_module(path: Path, size: int = SIZE) -> list[str]:
    """A Python module of ``size`` bytes made of small functions; returns its lines."""
    lines: list[str] = []
    total = n = 0
    while total < size:
        block = [f"def value_{n}(x):", f"    return x * {n} + {n % 7}", ""]
        lines += block
        total += sum(len(line) + 1 for line in block)
        n += 1
    text = "\n".join(lines)
    text = text[:size] if len(text) >= size else text + "#" * (size - len(text))
    path.write_text(text)
    return text.split("\n")


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("large")
    (folder / "pyproject.toml").write_text('[project]\nname = "big"\nrequires-python = ">=3.11"\n')
    path = folder / "generated.py"
    lines = write_large_module(path)
    assert path.stat().st_size == SIZE
    return path, lines


def test_fix_refuses_a_50_mb_file_saying_why_and_what_to_do(large):
    path, _ = large
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    listing = sorted(p.name for p in path.parent.iterdir())
    out = subprocess.run(
        [*ASSIST, "fix", str(path), "--write", "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    message = out.stderr
    assert str(path) in message  # the file
    assert "52,428,800 bytes (50.0 MiB)" in message  # its size
    assert "1,048,576 bytes (1.0 MiB)" in message  # the limit
    assert "--max-request-bytes 104857600" in message  # what to do
    assert "Nothing was written" in message
    assert "Traceback" not in message
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in path.parent.iterdir()) == listing


def complete_args(path: Path, line: int, column: int) -> argparse.Namespace:
    return argparse.Namespace(
        file=path,
        line=line,
        column=column,
        language=None,
        workspace=None,
        request_max_tokens=None,
        no_cache=False,
    )


def count_opens(monkeypatch: pytest.MonkeyPatch, target: Path) -> list[str]:
    """Every opening of ``target`` (with any mode) from now on."""
    opened: list[str] = []
    real_open = pathlib.Path.open

    def spy(self: Path, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        if self.resolve() == target.resolve():
            opened.append(str(args[0] if args else kwargs.get("mode", "r")))
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pathlib.Path, "open", spy)
    return opened


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_complete_sends_a_window_around_the_cursor_of_a_50_mb_file(large, monkeypatch, where):
    path, lines = large
    line = {"start": 2, "middle": len(lines) // 2, "end": len(lines) - 2}[where]
    if not lines[line - 1].startswith("    return"):
        line += 1 if lines[line].startswith("    return") else -1
    column = 5  # after the indentation, before `return`
    opened = count_opens(monkeypatch, path)

    request = build_request(complete_args(path, line, column))

    assert opened == ["rb"], "the file is read once, by the CLI; the profile reads no part of it"
    assert len(request.text) <= WINDOW_CHARS
    body = json.dumps(request.model_dump(exclude_none=True)).encode()
    assert len(body) < load_settings().max_request_bytes
    window_lines = request.text.split("\n")
    assert window_lines[request.line] == lines[line - 1]
    assert request.column == column - 1
    # The cursor's surroundings are there: the line before it and the line after it.
    if request.line > 0:
        assert window_lines[request.line - 1] == lines[line - 2]
    assert window_lines[request.line + 1] == lines[line]
    assert request.path == "generated.py"
    assert request.language == "python"
    assert request.profile is not None and request.profile.versions.get("python") == ">=3.11"
    assert request.profile.style.indent_size == 4


def test_complete_in_a_50_mb_single_line_file_sends_the_characters_around_the_cursor(tmp_path):
    path = tmp_path / "bundle.min.js"
    text = "".join(f"var a{n}={n};" for n in range(5_000_000))[:SIZE]
    path.write_text(text)
    column = 30_000_000
    request = build_request(complete_args(path, 1, column))
    assert len(request.text) <= WINDOW_CHARS
    assert request.line == 0
    assert request.text[: request.column] == text[column - 1 - request.column : column - 1]
    assert (
        request.text[request.column :]
        == text[column - 1 : column - 1 + len(request.text) - request.column]
    )


def test_complete_refuses_a_position_outside_the_large_file_with_exit_2(large):
    path, lines = large
    position = ["--line", str(len(lines) + 5), "--column", "1"]
    out = subprocess.run(
        [*ASSIST, "complete", str(path), *position, "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert out.returncode == 2, out.stderr
    assert f"which has {len(lines)} lines" in out.stderr
