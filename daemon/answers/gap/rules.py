"""The rules that trim an answer to the gap at the cursor, each a small pure function.
Each undoes one way a model goes past the gap; ``daemon.answers.gap.trim`` applies them in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from daemon.answers.gap.shape import Shape, comment_mark, ends_python_header, opens_block
from daemon.checks.syntax import check_syntax
from daemon.checks.verify import Verdict, can_verify, verify_insertion
from daemon.cursor import Cursor
from daemon.indentation import indent_of, render, shifted, width
from daemon.lexer import CLOSERS, brackets

# Lines below the cursor compared with the answer.
SUFFIX_LOOKAHEAD = 8
# Longest group of lines whose immediate repetition is dropped.
REPEATED_GROUP = 4
# A line at a compound statement's indentation that continues it (Python and brace languages).
_CONTINUES = re.compile(r"^(elif\b|else\b|except\b|finally\b|catch\b|case\b|\}\s*(else|catch)\b)")
_WORD = re.compile(r"\w")


def _is_comment(line: str, language: str | None) -> bool:
    mark = comment_mark(language)
    return mark is not None and line.strip().startswith(mark)


def _significant(line: str) -> bool:
    """Whether a line says something (not only brackets and punctuation)."""
    return bool(_WORD.search(line))


# A code model asked to fill a gap often goes on past it: it writes the lines that already follow
# the cursor again, leaves the cursor's block for the next function, loops on one line, or writes
# the right line at the wrong indentation. Each rule here undoes one of those. Most rules cut the
# answer after a leading run of whole lines (``_keep``): their ``*_cut`` helper says how many
# lines stay, so that the engine's ``until`` can stop generating at the same place the rule
# would cut.
def _keep(lines: list[str], count: int) -> str:
    """The first ``count`` lines, without the blank lines they end with."""
    while count > 0 and not lines[count - 1].strip():
        count -= 1
    return "\n".join(lines[:count])


def _first_width(lines: list[str], shape: Shape) -> int:
    """The column the answer's first line starts at, counting what the cursor's line holds."""
    if not lines:
        return width(shape.indent)
    if shape.on_empty_line:
        return width(shape.typed + indent_of(lines[0]))
    return width(indent_of(shape.typed))


# -- indentation -----------------------------------------------------------------------------


def _body_below(shape: Shape, column: int) -> bool:
    """Whether the code below the cursor is deeper than ``column``: the body of a block that a
    line at ``column`` opens is already there."""
    return shape.below is not None and width(shape.below) > column


def _target_width(have: int, shape: Shape, first: str, language: str | None) -> int:
    """Where the first line of an answer on an empty line belongs."""
    low, high = width(shape.floor), width(shape.indent)
    step = max(1, width(shape.unit))
    header = shape.below is not None and opens_block(first, language)
    if header and have == width(shape.below or "") - step and have >= low:
        return have  # a header whose body is the code below
    if shape.kind == "statement":
        low = high  # any other statement sits in the block
    code = first.strip()
    closes = bool(code) and (code[0] in CLOSERS or bool(_CONTINUES.match(code)))
    if closes:
        low = max(0, min(low, high - step))  # it closes or continues the enclosing statement
    if have > high or (have == 0 and not (closes and low == 0)):
        return high  # deeper than the block goes, or no indentation written
    if have >= low and (high - have) % step == 0:
        return have
    # Between levels, or below the floor: the nearest level above, within the block.
    return max(low, high - ((high - have) // step) * step)


def fit_indentation(answer: str, shape: Shape, language: str | None = None) -> str:
    """Fit the answer's indentation to the block at the cursor.

    On an empty line, the answer starts where its first line belongs: leading blank lines are
    dropped, a first line at a column that is no level of the block (none written at column 0,
    too deep, between levels) is moved to the block's indentation, and every later line is
    shifted by the same amount, keeping the answer's relative indentation; a first line that
    repeats the indentation typed before the cursor counts from column 0. Everywhere, leading
    whitespace follows the file: tabs in a file indented with tabs, spaces otherwise.
    """
    if shape.kind == "line" or not answer:
        return answer
    lines = answer.split("\n")
    tabs = shape.unit == "\t"
    shift = 0
    if shape.on_empty_line:
        while len(lines) > 1 and not lines[0].strip():
            lines.pop(0)
        if not lines[0].strip():
            return ""
        typed, written = width(shape.typed), width(indent_of(lines[0]))
        # A model that writes the indentation typed before the cursor again counts its first
        # line, like the others, from column 0.
        have = written if typed and written == typed else typed + written
        target = _target_width(have, shape, lines[0], language)
        shift = target - have
        lines[0] = render(target - typed, tabs) + lines[0].lstrip(" \t")
    for index in range(1, len(lines)):
        line = lines[index]
        lead = indent_of(line)
        if not line.strip() or not (shift or _wrong_style(lead, tabs)):
            continue
        lines[index] = shifted(line, shift, tabs)
    return "\n".join(lines)


def _wrong_style(lead: str, tabs: bool) -> bool:
    if tabs:
        return lead.startswith(" ") and width(lead) >= 4
    return "\t" in lead


# -- the code below the cursor ---------------------------------------------------------------


def _inserted_lines(lines: list[str], cursor: Cursor) -> list[str]:
    """The document's lines as the answer makes them (the cursor's line joins the first)."""
    made = list(lines)
    made[0] = cursor.before + made[0]
    made[-1] = made[-1] + cursor.after
    return made


def suffix_repeat_cut(lines: list[str], cursor: Cursor) -> int:
    """How many of the answer's lines stay before the first that writes the code below again."""
    below = [line.strip() for line in cursor.suffix.split("\n")[1:] if line.strip()]
    below = below[:SUFFIX_LOOKAHEAD]
    if not below or not lines:
        return len(lines)
    made = [line.strip() for line in _inserted_lines(lines, cursor)]
    code = [index for index, line in enumerate(made) if line]
    for position, index in enumerate(code):
        following = [made[i] for i in code[position:]]
        if following[0] == below[0]:
            run = following[:2] == below[:2] and len(below) > 1
            if _significant(below[0]) or run or len(following) == 1:
                return index
        for start in range(1, len(below) - 1):
            pair = below[start : start + 2]
            if following[:2] == pair and all(_significant(line) for line in pair):
                return index
    return len(lines)


def drop_suffix_repeats(answer: str, cursor: Cursor) -> str:
    """Cut the answer where it starts writing the lines right after the cursor again.

    Lines are compared stripped. A line equal to the first line of code below cuts there (a
    line of only brackets needs the next line to match too, or to end the answer); so does a
    run of two lines equal to two consecutive lines a little further below."""
    lines = answer.split("\n")
    count = suffix_repeat_cut(lines, cursor)
    return answer if count == len(lines) else _keep(lines, count)


# -- the cursor's block ----------------------------------------------------------------------


def block_exit_cut(lines: list[str], shape: Shape, language: str | None) -> int:
    """How many of the answer's lines stay inside the cursor's block."""
    if shape.kind == "line" or not lines:
        return len(lines)
    block = _first_width(lines, shape)
    depth, _ = brackets(shape.typed + lines[0], language)
    for index in range(1, len(lines)):
        line = lines[index]
        if not line.strip():
            continue
        column = width(indent_of(line))
        net, low = brackets(line, language)
        if depth <= 0 and column < block:
            return index
        if depth + low < 0 and column <= block:
            return index  # it closes a bracket the answer did not open
        depth += net
    return len(lines)


def stop_at_block_exit(answer: str, shape: Shape, language: str | None) -> str:
    """Cut the answer before its first later line that leaves the cursor's block: one less
    indented than the block (outside brackets the answer opened), or one that closes a
    bracket the answer did not open."""
    lines = answer.split("\n")
    count = block_exit_cut(lines, shape, language)
    return answer if count == len(lines) else _keep(lines, count)


# -- the shape of the gap --------------------------------------------------------------------


def _statement_end(lines: list[str], shape: Shape, language: str | None) -> int | None:
    """The number of lines the statement the answer starts takes, with the block it opens;
    None while it may still go on."""
    first = _first_width(lines, shape)
    depth = 0
    continued = False  # the previous line ends with a backslash
    has_block = False  # the statement opened a block (a Python colon, or a brace)
    python_body = False  # lines more indented than the statement belong to its body
    seen_code = False
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        column = first if index == 0 else width(indent_of(line))
        if seen_code and depth <= 0 and not continued:
            resumes = has_block and column == first and bool(_CONTINUES.match(line.strip()))
            if not ((python_body and column > first) or resumes):
                return index
        net, _ = brackets(line, language)
        depth += net
        if net > 0 and depth > 0 and line.rstrip().endswith("{"):
            has_block = True
        continued = line.rstrip().endswith("\\")
        if _is_comment(line, language) and not seen_code:
            continue
        seen_code = True
        header = column == first and depth <= 0 and not continued
        if language == "python" and header and ends_python_header(line):
            has_block = python_body = True
        if has_block and depth <= 0 and not continued and _body_below(shape, first):
            return index + 1  # the block's body is the code below: only its header is new
        if depth > 0 and line.rstrip().endswith("{") and _body_below(shape, first):
            return index + 1
        if depth <= 0 and not continued and not has_block:
            return index + 1  # a simple statement ends with its line
    return None


def shape_end(lines: list[str], shape: Shape, language: str | None) -> int | None:
    """How many lines the gap takes, once that is known from ``lines``; None while it is not."""
    ends: list[int] = []
    if shape.kind == "line" and lines:
        ends.append(1)
    elif shape.kind == "statement":
        statement = _statement_end(lines, shape, language)
        if statement is not None:
            ends.append(statement)
    if shape.max_lines is not None and len(lines) >= shape.max_lines:
        ends.append(shape.max_lines)
    return min(ends) if ends else None


def stop_at_shape(answer: str, shape: Shape, language: str | None) -> str:
    """Keep what the gap takes: the rest of the line, one statement (with the block it
    opens), or at most ``shape.max_lines`` lines."""
    lines = answer.split("\n")
    count = shape_end(lines, shape, language)
    if count is None or count >= len(lines):
        return answer
    return _keep(lines, count)


# -- loops -----------------------------------------------------------------------------------


def _repeats(kept: list[str], lines: list[str], index: int) -> int:
    """The size of the group starting at ``lines[index]`` that repeats the end of ``kept``."""
    for size in range(1, REPEATED_GROUP + 1):
        if index + size > len(lines) or size > len(kept):
            break
        group = [line.rstrip() for line in lines[index : index + size]]
        if group == [line.rstrip() for line in kept[-size:]] and any(
            _significant(line) for line in group
        ):
            return size
    return 0


def _code_above(lines: Sequence[str], line: int) -> list[str]:
    """The last ``REPEATED_GROUP`` non-blank lines before ``lines[line]``, in order."""
    found: list[str] = []
    index = line - 1
    while index >= 0 and len(found) < REPEATED_GROUP:
        if lines[index].strip():
            found.append(lines[index])
        index -= 1
    return found[::-1]


def drop_repeated_runs(
    answer: str, typed: str = "", lines: Sequence[str] = (), line: int = 0
) -> str:
    """Drop a line, or a group of up to ``REPEATED_GROUP`` lines, that repeats the one right
    before it (keep the first). Lines of only brackets repeat legitimately and never count.
    ``typed`` is what the cursor's line holds before the answer's first line; ``lines``, the
    document's, and ``line``, the cursor's: where only indentation is typed, an answer that
    starts by writing the last lines above the cursor again loses that repeat (in real code a
    line repeats the line of code before it about once in two thousand lines). Where what is
    left of it starts at another indentation than the cursor's, nothing is left."""
    written = answer.split("\n")
    made = [typed + written[0], *written[1:]]
    kept = _code_above(lines, line) if not typed.strip() else []
    before = len(kept)
    index = 0
    while index < len(made):
        size = _repeats(kept, made, index)
        if size:
            index += size
        else:
            kept.append(made[index])
            index += 1
    kept = kept[before:]
    if len(kept) == len(made):
        return answer
    if not kept or not kept[0].startswith(typed):
        return ""
    return "\n".join([kept[0][len(typed) :], *kept[1:]])


# -- parsing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parsed:
    """What ``keep_parseable`` kept, and how the whole answer and what was kept were judged."""

    text: str
    verdict: Verdict  # the judgement of ``text``
    whole: Verdict  # the judgement of the whole answer


def keep_parseable(
    answer: str, cursor: Cursor, language: str | None, *, longest: bool = True
) -> Parsed:
    """Keep the longest leading run of whole lines that verifies in the document.

    Verification is ``verify_insertion``'s: the document with the answer in it may have no more
    errors up to the answer's end than it had up to the cursor. When the whole answer fails,
    shorter leading runs are tried, longest first; where the document did not parse to begin
    with (or ``longest`` is False) only the first line is tried, as a fallback. When nothing
    verifies, the text is empty and the verdict says why.
    """
    whole = verify_insertion(language, cursor.prefix, answer, cursor.suffix)
    if whole.ok or not can_verify(language):
        return Parsed(answer, whole, whole)
    assert language is not None
    lines = answer.split("\n")
    sizes = [1] if len(lines) > 1 else []
    if longest and not check_syntax(language, cursor.prefix + cursor.suffix):
        sizes = list(range(len(lines) - 1, 0, -1))
    tried: set[str] = set()
    for size in sizes:
        part = _keep(lines, size)
        if not part.strip() or part == answer or part in tried:
            continue
        tried.add(part)
        if verify_insertion(language, cursor.prefix, part, cursor.suffix).ok:
            count = part.count("\n") + 1
            kept = "the first line" if count == 1 else f"the first {count} lines"
            reason = f"kept {kept}: the rest failed verification ({whole.reason})"
            return Parsed(part, Verdict(True, reason), whole)
    return Parsed("", Verdict(False, f"the answer failed verification ({whole.reason})"), whole)
