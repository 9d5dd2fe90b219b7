"""Drop an answer's repeat of what the cursor is in: the call, or the header of the body.
The call: ``name(`` answered ``name(...)``; the header: the ``def`` whose body the cursor
begins, written again."""

from __future__ import annotations

import re
from collections.abc import Sequence

from daemon.answers.gap.shape import Shape, ends_python_header
from daemon.indentation import indent_of, render, shifted, width
from daemon.lexer import brackets, first_closer

# The text before the cursor ends with a call's opening bracket: the callee's name (an
# attribute's, after a dot, counts too, as does a method of a string literal: ``b"".join(``)
# and what precedes it on the line.
_STRING = r"""[bBfFrRuU]{0,2}(?:"[^"\\\n]*"|'[^'\\\n]*')\."""
_CALL_END = re.compile(rf"(?<![\w.])(?:await\s+)?(?:{_STRING})?(?:\w+\.)*\w+\($")


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


# A small code model, more so when shown the callee's definition (a workspace snippet), starts a
# few of every hundred completions at ``name(`` by writing ``name(`` again. Programmers almost
# never nest a call in a call of the same name (about 2 in 10,000 of the bare-name calls in this
# project's installed packages; 4 of the 11,685 calls of a string literal's method, ``"".join(``,
# in the standard library and those packages), so the echo and the bracket that closes it are
# dropped. Only an answer whose first characters repeat the text right before the cursor, from a
# name's (or a string literal's) start up to its opening bracket, is changed, and only when the
# bracket the echo opened is closed on the answer's first line.
def drop_call_echo(answer: str, before: str, language: str | None) -> str:
    """The answer without a repeat of the call the cursor is in (``before`` is the cursor's
    line up to the cursor) and without the bracket that closes the repeat."""
    found = _CALL_END.search(before)
    if found is None:
        return answer
    call = found.group()
    # The longest tail of the typed call that the answer starts with, from a name's (or a
    # string literal's) start.
    for start in range(len(call) - 1):
        echo = call[start:]
        at_name = echo[0].isalpha() or echo[0] in "_\"'"
        if at_name and (start == 0 or not _is_word(call[start - 1])) and answer.startswith(echo):
            break
    else:
        return answer
    rest = answer[len(echo) :]
    close = first_closer(rest.split("\n", 1)[0], language)
    if close is None:
        return answer
    return rest[:close] + rest[close + 1 :]


# A Python header (``def``, ``async def`` or ``class``) and its name.
_HEADER = re.compile(r"\s*(?:async\s+def|def|class)\s+(\w+)")
# A function's header and its name.
_FUNCTION = re.compile(r"\s*(?:async\s+)?def\s+(\w+)")
# How far up a header's first line is looked for (a long parameter list).
_HEADER_LINES = 40


def _function_above(lines: Sequence[str], line: int, column: int) -> int | None:
    """The index of the line that starts the header of the function whose body starts at
    ``line``, ``column`` (its header ends on the last line of code above); None when the code
    above is no function's header."""
    index = line - 1
    while index >= 0 and not lines[index].strip():
        index -= 1
    if index < 0 or not ends_python_header(lines[index]):
        return None
    for start in range(index, max(-1, index - _HEADER_LINES), -1):
        text = lines[start]
        if not text.strip() or width(indent_of(text)) >= column:
            continue  # a parameter on a line of its own
        if _FUNCTION.match(text):
            return start
        if not text.lstrip().startswith(")"):
            return None
    return None


def _echoed_names(lines: Sequence[str], line: int, column: int) -> set[str]:
    """The names an answer at the start of a function's body would write again: the
    function's own, and those of the functions and classes defined before it in its block."""
    start = _function_above(lines, line, column)
    if start is None:
        return set()
    level = width(indent_of(lines[start]))
    names: set[str] = set()
    for text in reversed(lines[: start + 1]):
        if not text.strip():
            continue
        indent = width(indent_of(text))
        if indent < level and not text.lstrip().startswith(("#", ")")):
            break  # the block's own header: the enclosing block ends here
        found = _HEADER.match(text)
        if found and indent == level:
            names.add(found.group(1))
    return names


# Asked for the first line of an empty function's body, a small model sometimes writes a
# function's header again, one level deeper, and the body under it: at ``async def
# empty_send(message: Message) -> NoReturn:`` it answered ``async def empty_send(self, message:
# Message) -> NoReturn:`` in one run and ``async def empty_receive(self) -> NoReturn:`` (the
# function above) in another, each with the right ``raise`` under it. Real code almost never
# begins a function's body with a definition of its own name or of a name defined before it at
# its level: 43 of the 290,140 functions of the standard library and the Python packages
# installed on this machine do (5 and 38). So where the answer's first line is such a ``def`` or
# ``class``, the header is dropped and its body, moved up to the cursor's indentation, is the
# answer; what follows that body is left out with it.
def drop_header_echo(
    answer: str, lines: Sequence[str], line: int, shape: Shape, language: str | None
) -> str:
    """The answer without a header written again where the cursor begins a Python
    function's body (on an empty line); ``lines`` and ``line``: the document's and the
    cursor's."""
    if language != "python" or not shape.on_empty_line or not answer:
        return answer
    written = answer.split("\n")
    made = [shape.typed + written[0], *written[1:]]
    column = width(indent_of(made[0]))
    found = _HEADER.match(made[0])
    if found is None or found.group(1) not in _echoed_names(lines, line, column):
        return answer
    end = _header_end(made)
    if end is None:
        return answer  # the header is not finished: nothing to judge yet
    body: list[str] = []
    for text in made[end + 1 :]:
        if text.strip() and width(indent_of(text)) <= column:
            break
        body.append(text)
    while body and not body[-1].strip():
        body.pop()
    if not body:
        return ""
    shift = width(indent_of(next(text for text in body if text.strip()))) - column
    tabs = shape.unit == "\t"
    moved = [shifted(text, -shift, tabs) if text.strip() else "" for text in body]
    while not moved[0].strip():
        moved.pop(0)
    first = render(column - width(shape.typed), tabs) + moved[0].lstrip(" \t")
    return "\n".join([first, *moved[1:]])


def _header_end(lines: Sequence[str]) -> int | None:
    """The index of the line that ends the header ``lines`` begins with (None: none does)."""
    depth = 0
    for index, text in enumerate(lines):
        depth += brackets(text, "python")[0]
        if depth <= 0 and ends_python_header(text):
            return index
    return None
