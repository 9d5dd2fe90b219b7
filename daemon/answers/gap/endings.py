"""How an answer ends: the closers and the comma the code after the cursor does not take."""

from __future__ import annotations

import ast

from daemon.checks.syntax import parses
from daemon.checks.verify import can_verify
from daemon.cursor import Cursor
from daemon.lexer import CLOSERS

_CLOSING = "".join(CLOSERS)
# The statements whose value a stray comma turns into a tuple.
_VALUED = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


# Finishing a call whose closing bracket already follows the cursor (on its line, or on a line
# below in a call formatted one argument per line), the model closes it too:
# ``format_filename(value))`` where the file goes on with ``),``. The document then does not parse,
# though every error lies after the answer, so keep_parseable (which judges up to the answer's end)
# lets it through. The cut is made only when the whole document parses with it and not without it,
# and the closers cut are the ones the code after the cursor starts with.
def drop_extra_closers(answer: str, cursor: Cursor, language: str | None) -> str:
    """Drop closing brackets from the end of the answer that the code after the cursor starts
    with (on the cursor's line or below): the fewest that make the document parse, when it
    does not parse with them; the answer as written otherwise."""
    body = answer.rstrip()
    following = cursor.suffix.lstrip()
    closes = len(following) - len(following.lstrip(_CLOSING))
    if not closes or not body.endswith(tuple(_CLOSING)) or not can_verify(language):
        return answer
    assert language is not None
    if parses(language, cursor.prefix + answer + cursor.suffix):
        return answer
    for count in range(1, closes + 1):
        if not body.endswith(following[:count]):
            break
        shorter = body[: len(body) - count]
        if parses(language, cursor.prefix + shorter + cursor.suffix):
            return shorter
    return answer


def _end(text: str) -> tuple[int, int]:
    """The (1-based line, UTF-8 byte column) just after ``text``, as ``ast`` counts them."""
    last = text.rsplit("\n", 1)[-1]
    return text.count("\n") + 1, len(last.encode("utf-8"))


def _makes_tuple(tree: ast.Module, end: tuple[int, int]) -> bool:
    """Whether a statement ending at ``end`` has a one-element tuple without brackets as its
    value."""
    return any(
        isinstance(node, _VALUED)
        and isinstance(node.value, ast.Tuple)
        and len(node.value.elts) == 1
        and (node.end_lineno, node.end_col_offset) == end
        for node in ast.walk(tree)
    )


# The model ends the line with a comma, as if another argument or item followed, where the code
# below does not go on with one: the document does not parse (in ``x = (f(a),`` before ``if ...
# else ...)``), or, in Python, the statement's value becomes a one-element tuple (``ctx =
# EvalContext(self),``), which linters report as a slip. The comma is cut only when a parser says
# so; a document that does not parse for another reason is left alone.
def drop_stray_comma(answer: str, cursor: Cursor, language: str | None) -> str:
    """Drop the comma that ends the answer when the document parses without it and not with
    it (a comma before code that does not go on with a list), or, in Python, when it ends a
    statement whose value it makes a one-element tuple (``x = f(a),`` becomes ``x = f(a)``)."""
    body = answer.rstrip()
    if not body.endswith(",") or not can_verify(language):
        return answer
    assert language is not None
    if language == "python":
        try:
            tree = ast.parse(cursor.prefix + body + cursor.suffix)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
        else:
            return body[:-1] if _makes_tuple(tree, _end(cursor.prefix + body)) else answer
    elif parses(language, cursor.prefix + body + cursor.suffix):
        return answer
    if parses(language, cursor.prefix + body[:-1] + cursor.suffix):
        return body[:-1]
    return answer
