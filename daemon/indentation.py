"""A line's leading whitespace and the columns it takes (a tab is ``TAB_WIDTH`` columns)."""

from __future__ import annotations

TAB_WIDTH = 4


def indent_of(line: str) -> str:
    """The leading whitespace of ``line``."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def width(indentation: str) -> int:
    """Columns taken by leading whitespace (a tab counts as ``TAB_WIDTH``)."""
    return len(indentation.expandtabs(TAB_WIDTH))
