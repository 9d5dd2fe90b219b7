"""Calls that fit their callee: arguments a workspace function cannot take are dropped.
Python only, with the signatures of the snippets placed in the prompt.
"""

from __future__ import annotations

import ast
import keyword
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from daemon.cursor import Cursor
from daemon.lexer import CLOSERS, OPENERS, Token, lex
from daemon.protocol import ContextSnippet

# Lines before the cursor scanned for the call it is in: a call's arguments rarely span more.
SCAN_LINES = 30
# Nor are they longer than this: a longer text (a data literal on one line) is not scanned.
SCAN_CHARS = 8192


@dataclass(frozen=True)
class Signature:
    """What a callable takes: positional-only, positional-or-keyword and keyword-only names,
    which of them have no default, and whether it takes ``*args`` or ``**kwargs``."""

    positional_only: tuple[str, ...] = ()
    positional: tuple[str, ...] = ()
    keyword_only: tuple[str, ...] = ()
    required: frozenset[str] = frozenset()
    var_positional: bool = False
    var_keyword: bool = False

    def accepts(self, count: int, keywords: Iterable[str]) -> bool:
        """Whether ``count`` positional arguments and these keyword arguments bind to it with
        every required parameter given."""
        ordered = self.positional_only + self.positional
        if count > len(ordered) and not self.var_positional:
            return False
        given = set(ordered[:count])
        for name in keywords:
            if name in given:
                return False  # the same parameter twice
            if name in self.positional or name in self.keyword_only:
                given.add(name)
            elif not self.var_keyword:
                return False
        return self.required <= given


def _signature(arguments: ast.arguments, *, skip_first: bool) -> Signature:
    positional_only = [a.arg for a in arguments.posonlyargs]
    positional = [a.arg for a in arguments.args]
    ordered = positional_only + positional
    with_default = set(ordered[len(ordered) - len(arguments.defaults) :])
    required = {name for name in ordered if name not in with_default}
    required |= {
        a.arg
        for a, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is None
    }
    if skip_first and ordered:  # a method's self, bound by the call
        if positional_only:
            positional_only = positional_only[1:]
        else:
            positional = positional[1:]
        required.discard(ordered[0])
    return Signature(
        tuple(positional_only),
        tuple(positional),
        tuple(a.arg for a in arguments.kwonlyargs),
        frozenset(required),
        arguments.vararg is not None,
        arguments.kwarg is not None,
    )


def _definition(node: ast.stmt) -> tuple[str, Signature] | None:
    """The signature a top-level definition is called with, when it can be read for sure."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.decorator_list:
        return node.name, _signature(node.args, skip_first=False)
    if isinstance(node, ast.ClassDef) and not node.decorator_list:
        for member in node.body:
            if (
                isinstance(member, ast.FunctionDef)
                and member.name == "__init__"
                and not member.decorator_list
            ):
                return node.name, _signature(member.args, skip_first=True)
    return None


def signatures(snippets: Iterable[ContextSnippet]) -> dict[str, Signature]:
    """The signatures of the names the import snippets define (Python source that parses)."""
    found: dict[str, Signature | None] = {}
    for snippet in snippets:
        if snippet.kind != "import" or not snippet.name:
            continue
        try:
            tree = ast.parse(textwrap.dedent(snippet.text))
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            read = _definition(node)
            if read is None or read[0] != snippet.name:
                continue
            name, signature = read
            if name in found and found[name] != signature:
                found[name] = None  # two definitions disagree: check neither
            else:
                found[name] = signature
    return {name: signature for name, signature in found.items() if signature is not None}


def _tokens(text: str) -> list[Token] | None:
    """The tokens of ``text``, which may end inside brackets; None when a string in it is left
    open (the text starts or ends inside one)."""
    tokens = list(lex("python", text))
    return None if any(not token.closed for token in tokens) else tokens


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _open_stack(before: str) -> tuple[str, list[Token], list[int]] | None:
    """The text scanned before the cursor (its last lines), its tokens, and the indexes of the
    brackets still open at its end, innermost last; None when no start of the scan lexes whole."""
    lines = before.rsplit("\n", SCAN_LINES)[-SCAN_LINES:]
    for first in (0, max(0, len(lines) - 5), len(lines) - 1):
        text = "\n".join(lines[first:])
        if len(text) > SCAN_CHARS:
            continue
        tokens = _tokens(text)
        if tokens is not None:
            break
    else:
        return None
    stack: list[int] = []  # indexes of the open brackets' tokens
    for index, token in enumerate(tokens):
        if token.text in OPENERS:
            stack.append(index)
        elif token.text in CLOSERS and stack:
            stack.pop()
    return text, tokens, stack


def open_brackets(before: str) -> tuple[int, int] | None:
    """Python: how many brackets are open at the cursor, and how many of them were opened on
    lines above the cursor's; None when the code before the cursor does not lex whole."""
    scanned = _open_stack(before)
    if scanned is None:
        return None
    text, tokens, stack = scanned
    last_line = text.count("\n")
    return len(stack), sum(1 for index in stack if tokens[index].line < last_line)


def open_call(before: str) -> tuple[str, str] | None:
    """The call the cursor is inside, as (the callee's name, the arguments typed so far), when
    the innermost open bracket before the cursor is a call of a bare name."""
    scanned = _open_stack(before)
    if scanned is None:
        return None
    text, tokens, stack = scanned
    if not stack:
        return None
    index = stack[-1]
    bracket = tokens[index]
    if bracket.text != "(" or index == 0:
        return None
    callee = tokens[index - 1]
    if not callee.text.isidentifier() or keyword.iskeyword(callee.text):
        return None
    if index >= 2 and tokens[index - 2].text == ".":
        return None  # a method or a module's attribute: not a name the snippets define
    return callee.text, text[_offsets(text)[bracket.line] + bracket.column + 1 :]


def _close(call: str) -> int | None:
    """The offset in ``call`` (``name(...``) of the bracket that closes its first one."""
    tokens = _tokens(call)
    if tokens is None:
        return None
    starts = _offsets(call)
    depth = 0
    for token in tokens:
        if token.text in OPENERS:
            depth += 1
        elif token.text in CLOSERS:
            depth -= 1
            if depth == 0:
                return starts[token.line] + token.column
    return None


def _char_offset(text: str, starts: list[int], line: int, byte_column: int) -> int:
    """``ast``'s (1-based line, UTF-8 byte column) as an offset into ``text``."""
    start = starts[line - 1]
    row = text[start : starts[line] - 1] if line < len(starts) else text[start:]
    return start + len(row.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))


# The signatures come from the snippets of other files placed in the prompt (what the document
# imports, daemon.prompt.context): a function's parameters, or a class's ``__init__`` without its
# first. A small model often writes one argument too many (``TokenStream(stream, name, filename,
# state)``) or a keyword the callee does not have (``hint=hint``), and Python would raise TypeError
# on that line. The arguments the answer wrote are dropped from the end, last first, until the call
# binds; the answer is left as it is when it already binds, when no signature is known, or when no
# cut makes the call whole (a required parameter would be left out, or the arguments the programmer
# typed are themselves wrong).
#
# Only what can be read for sure is used: a decorated function or class may take other arguments
# than it declares (decorators wrap, dataclasses generate ``__init__``), and a class whose
# ``__init__`` is not in its outline takes what a base class takes; none of them is checked. (The
# outline shows a constructor inherited from a base class of the same module as one of the class's
# members, so such a class is checked.) A name two snippets define differently is not checked
# either.
def fit_call_arguments(
    answer: str, cursor: Cursor, snippets: Sequence[ContextSnippet], language: str | None
) -> str:
    """The answer with the arguments it wrote past what the callee takes dropped, when the
    cursor is inside a call of a name one of ``snippets`` defines (read only then)."""
    if language != "python" or not snippets or not answer.strip():
        return answer
    opened = open_call(cursor.before)
    if opened is None:
        return answer
    name, typed = opened
    signature = signatures(snippets).get(name)
    if signature is None:
        return answer
    call = f"{name}({typed}{answer}"
    written_from = len(call) - len(answer)
    close = _close(call)
    if close is None or close < written_from:
        return answer
    try:
        node = ast.parse(call[: close + 1], mode="eval").body
    except (SyntaxError, ValueError):
        return answer
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return answer
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        return answer  # *args or **kwargs: what they hold is not known
    starts = _offsets(call)
    given: list[tuple[ast.expr | ast.keyword, str | None]] = [(a, None) for a in node.args]
    given += [(k, k.arg) for k in node.keywords]
    arguments = [  # (start, end, keyword) in source order
        (
            _char_offset(call, starts, item.lineno, item.col_offset),
            _char_offset(call, starts, item.end_lineno or item.lineno, item.end_col_offset or 0),
            word,
        )
        for item, word in given
    ]
    arguments.sort()

    def binds(kept: list[tuple[int, int, str | None]]) -> bool:
        count = sum(1 for _, _, word in kept if word is None)
        return signature.accepts(count, [word for _, _, word in kept if word is not None])

    if binds(arguments):
        return answer
    kept = list(arguments)
    while kept and kept[-1][0] >= written_from:
        kept.pop()
        if binds(kept):
            end = kept[-1][1] if kept else written_from
            if end >= written_from:
                return call[written_from:end] + call[close:]
            # Only arguments the programmer typed are left: the call closes after them,
            # unless a comma was typed after the last one.
            return call[close:] if not call[end:written_from].strip() else answer
    return answer
