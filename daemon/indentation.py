"""A line's leading whitespace and the columns it takes (a tab is ``TAB_WIDTH`` columns)."""

from __future__ import annotations

TAB_WIDTH = 4


def indent_of(line: str) -> str:
    """The leading whitespace of ``line``."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def width(indentation: str) -> int:
    """Columns taken by leading whitespace (a tab counts as ``TAB_WIDTH``)."""
    return len(indentation.expandtabs(TAB_WIDTH))


def render(columns: int, tabs: bool) -> str:
    """Leading whitespace that takes ``columns`` (none below zero): tabs, then the spaces
    left over, in a file indented with tabs; spaces otherwise."""
    columns = max(0, columns)
    if tabs:
        return "\t" * (columns // TAB_WIDTH) + " " * (columns % TAB_WIDTH)
    return " " * columns


def shifted(line: str, columns: int, tabs: bool) -> str:
    """``line`` with its indentation moved by ``columns`` (to the left where negative, not
    past column 0), written as ``render`` writes it."""
    lead = indent_of(line)
    return render(width(lead) + columns, tabs) + line[len(lead) :]
