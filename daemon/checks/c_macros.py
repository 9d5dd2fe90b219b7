"""C's grammar errors that are the preprocessor's business, told apart from the author's."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar


class _Placed(Protocol):
    """Where an error is (the grammar's diagnostics; this module is below the grammar's)."""

    @property
    def line(self) -> int: ...
    @property
    def column(self) -> int: ...
    @property
    def end_line(self) -> int: ...


Diagnostic = TypeVar("Diagnostic", bound=_Placed)

# How many blanks are tried for one file: each is one more parse.
MAX_TRIES = 24
_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z_]\w*")
# ``XMLCALL``, ``NORETURN``, ``PRINTF_STYLE``, ``CPy_COLD``: capitals, and the part after the
# last underscore all capitals. ``PyObject``, ``XML_Char`` and ``size_t`` are not.
_MACRO_SHAPE = re.compile(r"^(?:[A-Za-z0-9]*_)*[A-Z][A-Z0-9]+$")
# Standard macros that take a type as an argument (``va_arg(args, PyObject *)``): read as
# an expression ``0``.
_NEUTRAL = frozenset({"va_arg", "offsetof"})
_SIMPLE_ARGUMENTS = re.compile(r"[\w\s,*]*")


# tree-sitter parses C before preprocessing, so real, compiling files have "errors" where a macro
# stands for something the grammar cannot guess: an attribute before a function (``CPy_NOINLINE``,
# ``static void XMLCALL``, zlib's ``local void quit(...)``), a macro call that is a statement
# without ``;``, or ``#if`` lines inside an initializer or an expression. Left in, such an error is
# the first a repair targets, "fixed" by a change the author never meant, or it hides the real typo
# behind it.
#
# What could be such a macro near each error (a conditional directive line inside the error, or a
# word shaped like a macro or ``#define``d by the file, before the error on its line or on the line
# above) is blanked, one at a time, and a blank is kept only when the grammar then reports fewer
# errors. Blanks keep every offset, so the errors left are at their places in the real text. Names
# the file uses as code are never blanked (they are not macro-shaped), so a typo between two of
# them is never hidden.
def without_macro_errors(
    text: str, errors: list[Diagnostic], parse: Callable[[str], list[Diagnostic]]
) -> list[Diagnostic]:
    """``errors`` (the grammar's, for ``text``) less those a macro explains; ``parse`` gives
    the grammar's errors for a text."""
    defined = set(_DEFINE.findall(text))
    view = text
    tried = 0
    index = 0
    while index < len(errors) and tried < MAX_TRIES:
        for spans in _suspects(view, errors[index], defined):
            if tried >= MAX_TRIES:
                break
            tried += 1
            trial = _blanked(view, spans)
            fewer = parse(trial)
            if len(fewer) < len(errors):
                view, errors = trial, fewer
                index = -1  # the errors moved: look again from the first
                break
        index += 1
    return errors


def _blanked(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end) span replaced, padded with spaces to its length (line
    breaks kept)."""
    for start, end, replacement in sorted(spans, reverse=True):
        piece = re.sub(r"[^\n]", " ", text[start:end])
        piece = replacement + piece[len(replacement) :]
        text = text[:start] + piece + text[end:]
    return text


def _suspects(text: str, error: _Placed, defined: set[str]) -> Iterator[list[tuple[int, int, str]]]:
    """Sets of spans of ``text`` (offsets, and what replaces each) that might be a macro the
    grammar tripped on at ``error``: the conditional directives inside it, all together and
    one by one; the macro words before it, all together and one by one."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    last = min(max(error.end_line, error.line), len(lines) - 1)
    directives = [
        (starts[n], starts[n] + len(lines[n]), "")
        for n in range(max(0, error.line - 1), last + 1)
        if _CONDITIONAL.match(lines[n]) and _balanced(lines[n])
    ]
    words = []
    for number in (error.line - 1, error.line):
        if not 0 <= number < len(lines) or lines[number].lstrip().startswith("#"):
            continue
        line = lines[number]
        whole = number < error.line or error.end_line > error.line  # a node over lines
        limit = len(line) if whole else max(error.column, _word_end(line, error))
        for match in _WORD.finditer(line[:limit]):
            word = match.group()
            if word not in _NEUTRAL and word not in defined and not _MACRO_SHAPE.match(word):
                continue
            end = _call_end(line, match.end(), word in _NEUTRAL)
            if end is None:  # a call that does not close on its line may be the typo's
                continue
            # A call that takes a type is read as an expression of its own.
            instead = "0" if word in _NEUTRAL else ""
            words.append((starts[number] + match.start(), starts[number] + end, instead))
    for found in (directives, words):
        if len(found) > 1:
            yield found
        for each in found:
            yield [each]


def _word_end(line: str, error: _Placed) -> int:
    """The end of the word the error is at (``unexpected 'XMLCALL'`` points at the macro)."""
    found = _WORD.match(line, error.column)
    return found.end() if found else error.column


def _balanced(line: str) -> bool:
    """Whether a directive's brackets pair up (one that does not may hold the typo)."""
    depth = 0
    for char in line:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _call_end(line: str, end: int, neutral: bool) -> int | None:
    """The end of ``WORD(args)`` when the word is called on its line, else of the word; None
    for a call whose parenthesis does not close on the line, or whose arguments are more than
    words and numbers (``PRINTF_STYLE(1, 2)``): an error inside them is the author's."""
    rest = line[end:]
    if not rest.lstrip(" \t").startswith("("):
        return end
    depth = 0
    for offset, char in enumerate(rest):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                arguments = rest[rest.index("(") + 1 : offset]
                simple = _SIMPLE_ARGUMENTS.fullmatch(arguments)
                return end + offset + 1 if neutral or simple else None
    return None
