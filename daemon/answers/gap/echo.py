"""Drop an answer's repeat of the call the cursor is in (``name(`` answered ``name(...)``)."""

from __future__ import annotations

import re

from daemon.lexer import first_closer

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
