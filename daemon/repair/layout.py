"""What the layout says about a broken file: where a missing closer goes, and bracket agreement."""

from __future__ import annotations

import re
from collections.abc import Iterator

from daemon.checks.keywords import KEYWORDS
from daemon.indentation import indent_of, width
from daemon.lexer import CLOSERS, OPENERS, Token
from daemon.repair.scan import Bracket, scan

# Punctuation that ends a line after a call's or condition's closer: `foo(x):`, `if (x) {`.
_TRAILERS = ":{;,"


# People indent as they mean, and the parser's guess does not know that: tree-sitter puts a missing
# ``}`` where its grammar can end (often at the end of the file), which moves the rest of the file
# into the block. Here the indentation decides: a block opened at a line's end closes on the first
# line whose indentation returns to the opener's line; a bracket opened inside a line with nothing
# continuing it on the next line closes on its own line.
def layout_mismatches(language: str, text: str) -> int:
    """How many brackets disagree with the layout (fewer is closer to what was meant)."""
    tokens, structure = scan(language, text)
    lines = text.split("\n")
    starts = _line_starts(tokens)
    count = 2 * (len(structure.unclosed) + len(structure.unopened))
    for opener, closer in structure.pairs:
        if closer.line == opener.line:
            continue
        base = width(indent_of(lines[opener.line]))
        closer_first = not lines[closer.line][: closer.column].strip()
        opens_block = _ends_line(tokens, opener)
        if closer_first:
            count += width(indent_of(lines[closer.line])) != base
            # An empty pair split over two lines: a closer that was put in the wrong place.
            count += closer.line == opener.line + 1 and opens_block
        else:
            count += opens_block  # what opens at a line's end closes on a line of its own
        if opens_block and any(
            opener.line < line < closer.line and width(indent_of(lines[line])) <= base
            for line in starts
        ):
            count += 1  # the block swallowed lines that its indentation says are outside
    return count


def closer_candidates(language: str, text: str) -> Iterator[str]:
    """Documents with one missing closer put where the layout says its bracket ends."""
    tokens, structure = scan(language, text)
    if not structure.unclosed and not structure.unopened:
        return
    lines = text.split("\n")
    starts = sorted(_line_starts(tokens))
    closed_on = {opener: closer for opener, closer in structure.pairs}
    seen: set[str] = set()
    for opener in sorted([*closed_on, *structure.unclosed], key=lambda b: (b.line, b.column)):
        closer = closed_on.get(opener)
        if closer is not None and closer.line == opener.line:
            continue
        for candidate in _closings(language, lines, tokens, starts, opener):
            if candidate not in seen:
                seen.add(candidate)
                yield candidate


def _closings(
    language: str, lines: list[str], tokens: list[Token], starts: list[int], opener: Bracket
) -> Iterator[str]:
    char = OPENERS[opener.char]
    base = width(indent_of(lines[opener.line]))
    after = next((line for line in starts if line > opener.line), None)
    returns = next(
        (line for line in starts if line > opener.line and width(indent_of(lines[line])) <= base),
        None,
    )
    if _ends_line(tokens, opener):
        if returns is None:
            return
        back = lines[returns]
        if back.lstrip().startswith(tuple(CLOSERS)) and width(indent_of(back)) == base:
            return  # the block is closed where its indentation returns
        if back.lstrip().startswith((";", ",", ")")):
            # What followed the closer is there (`;` of `};`): the closer goes before it.
            yield _insert(lines, returns, len(indent_of(back)), char)
        last = returns - 1
        # Back over blank lines, and the comments outside the block that introduce what
        # follows it.
        while last > opener.line and (
            not lines[last].strip()
            or (comment_only(language, lines[last]) and width(indent_of(lines[last])) <= base + 1)
        ):
            last -= 1
        new_line = indent_of(lines[opener.line]) + _closer_text(language, lines, opener, char)
        yield "\n".join([*lines[: last + 1], new_line, *lines[last + 1 :]])
        return
    line = lines[opener.line]
    end = code_end(language, line)
    opens_body = line[:end].endswith((":", "{"))
    if after is not None and width(indent_of(lines[after])) > base and not opens_body:
        return  # the next line continues it
    if opens_body and line[:end].endswith("{") and returns is not None:
        # `app.get("/", (req, res) => {` ... `}`: the call closes after the block's brace.
        back = lines[returns]
        if back.strip().startswith("}") and width(indent_of(back)) == base:
            brace = back.index("}") + 1
            rest = back[brace:].strip()
            tail = ";" if not rest and language not in ("python", "go") else ""
            if _uses_semicolons(lines) or not tail:
                yield _insert(lines, returns, brace, char + tail)
            yield _insert(lines, returns, brace, char)
    yield _insert(lines, opener.line, end, char)
    trail = end
    while trail > opener.column + 1 and (line[trail - 1] in _TRAILERS or line[trail - 1] == " "):
        trail -= 1
    if trail < end:
        yield _insert(lines, opener.line, trail, char)
    # An index or a short argument: the closer right after the first token inside.
    inside = [t for t in tokens if t.line == opener.line and t.column > opener.column]
    if inside and inside[0].kind != "punct":
        yield _insert(lines, opener.line, inside[0].column + len(inside[0].text), char)
    if not inside:
        return
    if inside[0].text in _EMPTY_BEFORE.get(char, ()):
        yield _insert(lines, opener.line, opener.column + 1, char)  # ``clear(: void``: empty
    if char == "]":
        return
    # Parameters, or an import's names, end before the word that follows them
    # (``int port throws IOException``, ``import { a, b from``).
    words = KEYWORDS.get(language, frozenset()) | {"from"}
    follows = next((t for t in inside[1:] if t.kind == "word" and t.text in words), None)
    if follows is not None:
        spot = len(line[: follows.column].rstrip())
        yield _insert(lines, opener.line, spot, char)


# What follows an opener whose closer was lost right after it: ``clear(: void``,
# ``methods[ = {``.
_EMPTY_BEFORE = {")": (":", "{", "=>"), "]": ("=", ";", ")", ",")}


def _closer_text(language: str, lines: list[str], opener: Bracket, char: str) -> str:
    """The closer as its siblings are written: ``},`` after an item, ``};`` after a statement."""
    head = lines[opener.line]
    base = indent_of(head)
    for line in reversed(lines[: opener.line]):
        if line.strip() and width(indent_of(line)) < width(base):
            break  # left the enclosing block: no earlier sibling
        if indent_of(line) == base and line.strip().startswith(char):
            tail = line.strip()[1:2]
            return char + tail if tail in (",", ";") else char
    if language not in ("python", "go") and _assigns(language, head) and _uses_semicolons(lines):
        return char + ";"
    return char


_ASSIGNS = re.compile(r"=\s*[\w:<>&]*\s*[\[{(]\s*$")


def _assigns(language: str, line: str) -> bool:
    """Whether a statement ends with the block opened on ``line`` (so a ``;`` follows it)."""
    code = line.strip()
    if language in ("c", "cpp") and code.startswith(("struct ", "class ", "enum ", "union ")):
        return True
    return bool(_ASSIGNS.search(code))


def _uses_semicolons(lines: list[str]) -> bool:
    """Whether the file ends its statements with ``;`` (lines that end a statement)."""
    ends = [line.rstrip()[-1:] for line in lines if line.strip()]
    statements = [end for end in ends if end not in "{}[(,:"]
    return bool(statements) and statements.count(";") * 2 >= len(statements)


def _insert(lines: list[str], line: int, column: int, text: str) -> str:
    target = lines[line]
    return "\n".join([*lines[:line], target[:column] + text + target[column:], *lines[line + 1 :]])


def _line_starts(tokens: list[Token]) -> set[int]:
    """Lines on which a token begins the line (a string's continuation lines are not)."""
    starts: set[int] = set()
    previous = -1
    for token in tokens:
        if token.line != previous:
            starts.add(token.line)
            previous = token.line + token.text.count("\n")
    return starts


def _ends_line(tokens: list[Token], bracket: Bracket) -> bool:
    """Whether the bracket is the last token on its line."""
    for index, token in enumerate(tokens):
        if token.line == bracket.line and token.column == bracket.column:
            return index + 1 == len(tokens) or tokens[index + 1].line != bracket.line
    return False


def code_end(language: str, line: str) -> int:
    """Where a line's code ends: before a trailing comment and trailing spaces."""
    marker = "#" if language == "python" else "//"
    in_string: str | None = None
    end = len(line)
    index = 0
    while index < len(line):
        char = line[index]
        if in_string:
            if char == "\\":
                index += 2
                continue
            if char == in_string:
                in_string = None
        elif char in "'\"`":
            in_string = char
        elif line.startswith(marker, index):
            end = index
            break
        index += 1
    return len(line[:end].rstrip())


# How a line that holds only (a part of) a comment starts, beside ``//`` and ``/*``: a block
# comment's inner lines (`` * text``) and its end.
_COMMENT_LINE = re.compile(r"^\s*(//|/\*|\*/|\*(\s|$))")


def comment_only(language: str, line: str) -> bool:
    """Whether ``line`` holds a comment and no code (a block comment's inner lines too)."""
    if language == "python":
        return line.lstrip().startswith("#")
    return bool(_COMMENT_LINE.match(line))
