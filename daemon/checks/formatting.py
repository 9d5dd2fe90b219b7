"""Format code with the formatter the workspace uses, when that formatter is installed."""

from __future__ import annotations

import importlib.util
import logging
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from daemon.checks import lint

log = logging.getLogger(__name__)

# An argv for the formatter, given the line length and a scratch directory; None: not installed.
Command = Callable[[int | None, Path], list[str] | None]


# Which formatter applies comes from the workspace profile's ``tools``; whether it runs depends on
# what is installed here. A formatter runs on stdin and stdout only, in an empty temporary
# directory with a timeout, and reads no configuration of the user's: the settings that matter
# (line length) come with the request. FORMATTERS are tried in order; prettier, rustfmt or gofmt
# would be one more entry each.
@dataclass(frozen=True)
class Formatter:
    name: str  # the tool's name as WorkspaceProfile.tools lists it
    languages: frozenset[str]  # LSP language ids it formats
    command: Command


def _ruff_command(line_length: int | None, workdir: Path) -> list[str] | None:
    binary = lint.ruff_path()
    if binary is None:
        return None
    argv = [binary, "format", "--isolated", "--no-cache", "--stdin-filename", lint.STDIN_NAME]
    if line_length is not None and line_length > 0:
        # ruff refuses wider lines; the widest it allows is the closest to what was asked.
        argv += ["--line-length", str(min(line_length, lint.MAX_RUFF_LINE_LENGTH))]
    return [*argv, "-"]


def _black_command(line_length: int | None, workdir: Path) -> list[str] | None:
    if importlib.util.find_spec("black") is not None:
        argv = [sys.executable, "-m", "black"]
    elif binary := shutil.which("black"):
        argv = [binary]
    else:
        return None
    # Without --config black looks for a pyproject.toml above the working directory, and then
    # in the user's home: an empty file of our own keeps its settings to what we pass.
    config = workdir / "black.toml"
    config.write_text("")
    argv += ["-q", "--config", str(config)]
    if line_length is not None and line_length > 0:
        argv += ["--line-length", str(line_length)]
    return [*argv, "-"]


# Tried in this order: with both configured, ruff (the faster) formats.
FORMATTERS: dict[str, Formatter] = {
    "ruff": Formatter("ruff", frozenset({"python"}), _ruff_command),
    "black": Formatter("black", frozenset({"python"}), _black_command),
}


def format_code(
    text: str,
    language: str,
    tools: Sequence[str],
    line_length: int | None = None,
    timeout: float = 5.0,
) -> tuple[str, str] | None:
    """(formatted text, formatter name), by the first of ``FORMATTERS`` that ``tools`` names,
    that formats ``language`` and is installed; None when none applies or is installed, or when
    it failed (the text does not parse, it timed out). Never raises."""
    wanted = {tool.strip().lower() for tool in tools}
    for formatter in FORMATTERS.values():
        if formatter.name not in wanted or language not in formatter.languages:
            continue
        try:
            with tempfile.TemporaryDirectory(prefix="assist-format-") as scratch:
                argv = formatter.command(line_length, Path(scratch))
                if argv is None:
                    continue  # not installed: the next configured formatter may be
                output = lint.run_tool(argv, text, timeout, cwd=scratch)
        except Exception:  # a formatter must never take a repair down
            log.debug("formatting with %s failed", formatter.name, exc_info=True)
            return None
        return None if output is None else (output, formatter.name)
    return None
