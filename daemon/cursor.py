"""A document split once at the cursor: its lines, the text before and after the cursor.
Routing, the prompt and verification all read the same ``Cursor`` instead of splitting again.
"""

from __future__ import annotations

from dataclasses import dataclass


class PositionError(ValueError):
    """The cursor position is not inside the document."""


@dataclass(frozen=True)
class Cursor:
    """A request's document, split here once when the request is prepared. Positions are the
    wire's (``daemon.protocol``): 0-based, and columns count code points."""

    text: str
    lines: list[str]
    line: int
    column: int
    prefix: str  # the document before the cursor
    suffix: str  # the document after the cursor

    @classmethod
    def locate(cls, text: str, line: int, column: int) -> Cursor:
        """Split ``text`` at a 0-based (line, column); raises PositionError outside it."""
        lines = text.split("\n")
        return cls._at(text, lines, line, column)

    @classmethod
    def _at(cls, text: str, lines: list[str], line: int, column: int) -> Cursor:
        if line >= len(lines):
            raise PositionError(
                f"line {line} is past the end of the document, which has {len(lines)} lines "
                f"(lines are 0-based on the wire)"
            )
        current = lines[line]
        length = len(current[:-1]) if current.endswith("\r") else len(current)
        if column > length:
            raise PositionError(
                f"column {column} is past the end of line {line}, which has {length} "
                f"characters (columns are 0-based on the wire)"
            )
        offset = sum(len(item) + 1 for item in lines[:line]) + column
        return cls(text, lines, line, column, text[:offset], text[offset:])

    @property
    def line_text(self) -> str:
        return self.lines[self.line]

    @property
    def before(self) -> str:
        """The cursor's line up to the cursor."""
        return self.line_text[: self.column]

    @property
    def after(self) -> str:
        """The cursor's line from the cursor on."""
        return self.line_text[self.column :]

    def line_start(self) -> Cursor:
        """The document with the cursor's line emptied of its whitespace and the cursor at
        its start. For a cursor on a line that holds only whitespace: a prompt that ends on a
        line break lets the model write the indentation itself, as it learned to (a prompt
        ending in spaces splits the indentation into tokens the model rarely saw there)."""
        if self.line_text.strip():
            raise ValueError("the cursor's line holds more than whitespace")
        lines = [*self.lines[: self.line], "", *self.lines[self.line + 1 :]]
        return Cursor._at("\n".join(lines), lines, self.line, 0)

    def typed(self, inserted: str) -> Cursor:
        """The document with ``inserted`` typed at the cursor, the cursor after it."""
        if not inserted:
            return self
        typed_lines = (self.before + inserted).split("\n")
        column = len(typed_lines[-1])
        typed_lines[-1] += self.after
        lines = [*self.lines[: self.line], *typed_lines, *self.lines[self.line + 1 :]]
        prefix = self.prefix + inserted
        return Cursor(
            prefix + self.suffix,
            lines,
            self.line + len(typed_lines) - 1,
            column,
            prefix,
            self.suffix,
        )


def split_at_cursor(text: str, line: int, column: int) -> tuple[str, str]:
    """The document before and after a 0-based (line, column)."""
    cursor = Cursor.locate(text, line, column)
    return cursor.prefix, cursor.suffix
