"""Candidates for the slips people make while typing, each a small named rule.
A rule only proposes: every candidate is verified and ranked like any other.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from daemon.checks.keywords import (
    KEYWORDS,
    NAME,
    misspelt_keywords,
    used_once,
)
from daemon.checks.names import UNDEFINED_NAMES, respelling
from daemon.checks.syntax import Diagnostic
from daemon.indentation import indent_of, width
from daemon.lexer import Token
from daemon.repair.layout import code_end, comment_only
from daemon.repair.scan import scan

_ELSE_IF = re.compile(r"^(\s*)else\s+if\b")
_PRINT = re.compile(r"^(\s*)print\s+(?![(=])(.+)$")
_OPENS_BLOCK = re.compile(
    r"^\s*(\}\s*)?(if|else|elif|for|while|func|fn|def|class|switch|match|loop|impl|try)\b"
)
_CONDITION = re.compile(r"^\s*(\}\s*)?(else\s+if|elif|if|while)\b")
_LONE_EQUALS = re.compile(r"(?<![=!<>:+\-*/%&|^])=(?![=>])")
_CLOSING = ")]};,"
_FIELD = re.compile(r"^\s*(\w+\??)\s+(?=[\w\"'\[{(-])")
_QUOTES = "'\"`"
# Keywords that stand for an object, whose members follow a dot.
_VALUE_KEYWORDS = frozenset({"this", "super"})
# Python's compiler messages that mean "this line is not where its block is".
_PLACEMENT: tuple[str, ...] = (
    "'return' outside function",
    "'break' outside loop",
    "'continue' not properly",
    "'yield' outside function",
    "'await' outside",
    "unexpected indent",
    "unindent does not match",
    "expected an indented block",
)


def slip_candidates(language: str, text: str, problem: Diagnostic) -> Iterator[tuple[str, str]]:
    """(rule, document) pairs for the first error ``problem`` of ``text``."""
    lines = text.split("\n")
    if problem.line >= len(lines):
        return
    if language == "python":
        yield from _python_slips(lines, problem)
    if problem.code in UNDEFINED_NAMES:
        yield from _misspelt_name(language, lines, problem, text)
        return
    for index in _near(language, lines, problem):
        if comment_only(language, lines[index]):
            continue  # the code's slip is not inside a comment
        yield from _missing_comma(language, lines, index)
        yield from _closing_quote(language, lines, index)
        yield from _missing_punctuation(language, lines, index)
        yield from _block_opener(language, lines, index)
        yield from _separator(language, lines, index)
        yield from _stray_end(language, lines, index)
        yield from _equals_in_condition(language, lines, index)
        yield from _misspelt_keyword(language, lines, index, text)
        yield from _arrow(language, lines, index)
        yield from _optional_colon(language, lines, index)
        yield from _opener_at_end(language, lines, index)
        yield from _doubled_closer(language, lines, index)


def late_slip_candidates(
    language: str, text: str, problem: Diagnostic
) -> Iterator[tuple[str, str]]:
    """The rules that guess what was lost between two tokens (an opening bracket, a dot, a
    comma, a type's colon): proposed after the parser's own hints, which win a tie (a type
    literal's members are separated by the ``;`` the parser asks for, not a comma)."""
    lines = text.split("\n")
    if problem.line >= len(lines) or problem.code in UNDEFINED_NAMES:
        return
    for index in _near(language, lines, problem):
        yield from _lost_opener(language, lines, index, text)
        yield from _lost_between_words(language, lines, index, text)


def _near(language: str, lines: list[str], problem: Diagnostic) -> list[int]:
    """The lines a rule looks at: the code line above the error (comments between skipped),
    the error's, and one below."""
    last = min(len(lines), max(problem.end_line, problem.line) + 2)
    above = _code_line_above(language, lines, problem.line)
    first = problem.line if above is None else above
    return sorted({first, *range(max(0, problem.line - 1), last)})


def _code_line_above(language: str, lines: list[str], index: int) -> int | None:
    """The nearest line above ``index`` with code on it (blank and comment lines skipped)."""
    return next(
        (
            i
            for i in range(index - 1, -1, -1)
            if lines[i].strip() and not comment_only(language, lines[i])
        ),
        None,
    )


def _replace(lines: list[str], index: int, new: str) -> str:
    return "\n".join([*lines[:index], new, *lines[index + 1 :]])


def _python_slips(lines: list[str], problem: Diagnostic) -> Iterator[tuple[str, str]]:
    for index in range(max(0, problem.line - 1), min(len(lines), problem.line + 2)):
        line = lines[index]
        if match := _ELSE_IF.match(line):
            yield "else if -> elif", _replace(lines, index, _ELSE_IF.sub(r"\1elif", line, 1))
        if (match := _PRINT.match(line)) and "print" in problem.message + line:
            end = code_end("python", line)
            args = line[match.start(2) : end].rstrip()
            yield "print x -> print(x)", _replace(lines, index, f"{match.group(1)}print({args})")
    if problem.message.startswith(_PLACEMENT):
        yield from _reindent_to_block(lines, problem.line)


def _reindent_to_block(lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """The line takes the indentation of the code line before it (one more after a ``:``)."""
    previous = _code_line_above("python", lines, index)
    if previous is None:
        return
    above = lines[previous]
    indent = indent_of(above)
    if code_end("python", above) and above[: code_end("python", above)].endswith(":"):
        unit = "\t" if indent.startswith("\t") else "    "
        indent += unit
    body = lines[index].lstrip(" \t")
    if indent != indent_of(lines[index]):
        yield "indentation of the block", _replace(lines, index, indent + body)


def _missing_comma(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """Items on separate lines: the comma at the end of the code line above ``index``
    (before its trailing comment; comment lines between skipped)."""
    previous = _code_line_above(language, lines, index)
    if previous is None or not lines[index].strip():
        return
    above = lines[previous]
    end = code_end(language, above)
    if not end or above[end - 1] in ",([{:;":
        return
    if width(indent_of(lines[index])) < width(indent_of(above)):
        return  # the line leaves the list: not an item
    yield "missing comma between lines", _replace(lines, previous, above[:end] + "," + above[end:])


def _closing_quote(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """An unterminated string or template literal: its quote where the code resumes.

    The places, likeliest first: before the first `,` or `)` (or ` <<`, ` +`) that could end an
    argument, then before the line's closing punctuation, then at the line's end."""
    line = lines[index]
    tokens, _ = scan(language, line)
    strings = [t for t in tokens if t.kind == "string" and t.text[:1] in _QUOTES]
    if not strings:
        return
    last = strings[-1]
    quote = last.text[0]
    if len(last.text) > 1 and last.text.endswith(quote) and not last.text.endswith("\\" + quote):
        return  # terminated
    end = len(line.rstrip())
    if language in ("c", "cpp") and line[:end].endswith("\\"):
        end = len(line[: end - 1].rstrip())  # a macro's line, continued
    places: list[int] = []
    for spot in range(last.column + 1, end):
        if line[spot] in ",)" or line.startswith((" <<", " +"), spot):
            places.append(spot)
    trail = end
    while trail > last.column + 1 and line[trail - 1] in _CLOSING + " ":
        trail -= 1
        places.append(trail)
    places.append(end)
    # ``f("",)``: a trailing comma in a call is not the author's likeliest.
    places = [p for p in places if not re.match(r",\s*\)", line[p:])] or places
    for spot in sorted(set(places)):
        yield "closing quote", _replace(lines, index, line[:spot] + quote + line[spot:])
    # An item of a list of strings that lost its quote took the separator and the next item's
    # opening quote for its own (``'2a, '2c'`` for ``'2a', '2c'``): the quote goes back
    # before the separator.
    for earlier in strings[:-1]:
        sign = earlier.text[0]
        for found in re.finditer(r",\s", earlier.text):
            spot = earlier.column + found.start()
            yield "closing quote", _replace(lines, index, line[:spot] + sign + line[spot:])


def _missing_punctuation(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """A `;` or `:` the line needs at its end (`case 1` -> `case 1:`), or a `:` after a
    field's name (`name "x"` -> `name: "x"`)."""
    line = lines[index]
    end = code_end(language, line)
    if not end:
        return
    ends_struct = language in ("c", "cpp") and line[:end].strip() == "}"
    if language not in ("python", "go") and (line[end - 1] not in ";{}(," or ends_struct):
        yield "missing ; at the line's end", _replace(lines, index, line[:end] + ";" + line[end:])
    if line.lstrip().startswith(("case ", "default")) and not line[:end].endswith(":"):
        yield "missing : after a case", _replace(lines, index, line[:end] + ":" + line[end:])
    # (In C, ``name: x`` is a label: a name before a value there lost something else.)
    if language not in ("python", "c", "cpp") and (match := _FIELD.match(line)):
        spot = match.end(1)
        if language.startswith("javascript") and _LONE_EQUALS.search(line[spot:end]):
            return  # ``module exports = {``: a JavaScript label before an assignment, not a key
        yield "missing : after a name", _replace(lines, index, line[:spot] + ":" + line[spot:])


def _block_opener(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """`if x <= 0` over an indented body: the block's `{` (Python: its `:`)."""
    line = lines[index]
    end = code_end(language, line)
    following = next((ln for ln in lines[index + 1 :] if ln.strip()), None)
    if not end or following is None or width(indent_of(following)) <= width(indent_of(line)):
        return
    if not _OPENS_BLOCK.match(line) or line[end - 1] in "{:":
        return
    opener = ":" if language == "python" else " {"
    yield "the block's opener", _replace(lines, index, line[:end] + opener + line[end:])


def _separator(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """`;` where the list needs `,` (a struct's field), or `,` where a statement needs `;`."""
    line = lines[index]
    end = code_end(language, line)
    if language == "python" or not end or line[end - 1] not in ",;":
        return
    other = "," if line[end - 1] == ";" else ";"
    if other == ";" and language == "go":
        return  # Go's statements end with the line
    yield (
        f"{other} for {line[end - 1]}",
        _replace(lines, index, line[: end - 1] + other + line[end:]),
    )


def _stray_end(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """A stray token at the end of a line: the line without it."""
    line = lines[index]
    end = code_end(language, line)
    if end and line[end - 1] in _CLOSING + ":":
        yield "stray token at the line's end", _replace(lines, index, line[: end - 1] + line[end:])


def _equals_in_condition(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    line = lines[index]
    if not _CONDITION.match(line):
        return
    for match in _LONE_EQUALS.finditer(line[: code_end(language, line)]):
        spot = match.start()
        yield "== for = in a condition", _replace(lines, index, line[:spot] + "=" + line[spot:])


# `(a, b) = expr` inside an expression, or `= name = {` (one parameter, a block body): an
# arrow function whose `>` was lost.
_LOST_ARROW = re.compile(r"\)\s*=(?![=>])|(?<=[=(,:])\s*[A-Za-z_$][\w$]*\s*=(?=\s*\{)")


def _misspelt_keyword(
    language: str, lines: list[str], index: int, text: str
) -> Iterator[tuple[str, str]]:
    """A word one slip away from a keyword (``retrun``, ``improt``) spelt as the keyword.

    Only a word the document uses nowhere else: a name one letter from a keyword that the
    code uses (``form``, ``lets``) is the author's own."""
    line = lines[index]
    end = code_end(language, line)
    tokens, _ = scan(language, line[:end])
    for token in tokens:
        if token.kind in ("string", "comment") or not NAME.fullmatch(token.text):
            continue
        keywords = misspelt_keywords(language, token.text)
        if not keywords or not used_once(token.text, text):
            continue
        start = token.column
        for word in keywords:
            fixed = line[:start] + word + line[start + len(token.text) :]
            yield f"misspelt keyword {token.text} -> {word}", _replace(lines, index, fixed)


def _arrow(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """``(x) = x + 1`` (or ``= x = {``) where an arrow function is meant: ``(x) => x + 1``."""
    if language.startswith(("javascript", "typescript")):
        yield from _insert_after(
            language, lines, index, _LOST_ARROW, ">", "=> for = after a parameter list"
        )


def _insert_after(
    language: str, lines: list[str], index: int, pattern: re.Pattern[str], text: str, rule: str
) -> Iterator[tuple[str, str]]:
    """The line with ``text`` inserted after one match of ``pattern`` in its code, for each."""
    line = lines[index]
    for match in pattern.finditer(line[: code_end(language, line)]):
        spot = match.end()
        yield rule, _replace(lines, index, line[:spot] + text + line[spot:])


# ``name? type``: an optional parameter or member whose ``:`` was lost (TypeScript).
_OPTIONAL = re.compile(r"(?<=[\w$])\?(?=\s+[\w$\[{(])")


def _optional_colon(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """``previous? [number, number]`` where ``previous?: [number, number]`` is meant."""
    if language.startswith("typescript"):
        yield from _insert_after(
            language, lines, index, _OPTIONAL, ":", "lost : after an optional name"
        )


def _opener_at_end(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """A call or list whose items continue on the lines below, and whose closer stands on a
    line of its own where the block's indentation returns, lost its opener at the end of
    the line (``warnings.warn`` ... ``)`` for ``warnings.warn(`` ... ``)``)."""
    line = lines[index]
    end = code_end(language, line)
    if not end or not (line[end - 1].isalnum() or line[end - 1] in "_$"):
        return
    base = width(indent_of(line))
    following = [i for i in range(index + 1, len(lines)) if lines[i].strip()]
    if not following or width(indent_of(lines[following[0]])) <= base:
        return
    back = next((i for i in following if width(indent_of(lines[i])) <= base), len(lines))
    closer = lines[back].lstrip()[:1] if back < len(lines) else ""
    if back == len(lines) or width(indent_of(lines[back])) != base or closer not in _OPENER_OF:
        # Or the items' own lines close more than they open (``remove=(3, 15))``).
        tokens, _ = scan(language, "\n".join(lines[following[0] : back]))
        unmatched, _ = _unmatched_closers(tokens)
        closer = tokens[unmatched[0]].text if unmatched else ""
    if closer in _OPENER_OF:
        opener = _OPENER_OF[closer]
        yield f"lost {opener}", _replace(lines, index, line[:end] + opener + line[end:])


def _doubled_closer(language: str, lines: list[str], index: int) -> Iterator[tuple[str, str]]:
    """A closer typed twice (``f(x)) < 1``), removed: the one no opener matches, or, where the
    doubled one took the opener of a closer further on (``if (f(x)) < 1) {``, whose last
    ``)`` is left unmatched), one of a doubled pair before that closer."""
    line = lines[index]
    tokens, _ = scan(language, line[: code_end(language, line)])
    unmatched, _ = _unmatched_closers(tokens)
    for closer in unmatched[:2]:
        token = tokens[closer]
        for number in range(closer, 0, -1):
            before, after = tokens[number - 1], tokens[number]
            if after.text == token.text == before.text and before.column + 1 == after.column:
                spot = after.column
                yield "doubled closer", _replace(lines, index, line[:spot] + line[spot + 1 :])


_OPENER_OF = {")": "(", "]": "["}


def _lost_opener(
    language: str, lines: list[str], index: int, text: str
) -> Iterator[tuple[str, str]]:
    """A line whose unmatched ``)`` or ``]`` lost its opener: the opener put where a call or
    an index begins, after a word before it (``print x)``, ``f)`` for ``f()``), inside a word
    the document uses only there (``printx)`` joined ``print`` and ``x``), or before an arrow
    function's parameters (``f() => x)`` for ``f(() => x)``, ``) => x`` for ``() => x``).
    Not between a word and a closer that has its opener: ``f(x))`` is a doubled closer, not
    ``f(x())``; but a call that lost its opener next to another call's closer (``g(s.trim)``
    for ``g(s.trim())``) is ``f()`` written ``f)``."""
    line = lines[index]
    tokens, _ = scan(language, line[: code_end(language, line)])
    unmatched, partner = _unmatched_closers(tokens)
    arrows = language.startswith(("javascript", "typescript"))
    angles = _generic_angles(language, tokens)
    for closer in unmatched[:2]:
        opener = _OPENER_OF.get(tokens[closer].text)
        if opener is None:
            continue
        spots: list[int] = []
        for number, (token, after) in enumerate(itertools.pairwise(tokens[: closer + 1])):
            # A cast's operand in parentheses (``(void*)argv[1])``), or a cast that lost its
            # opener (``f(a, int)b)``).
            cast = token.text == ")" or _casts(tokens, number + 1)
            if opener == "(" and after.kind == "word" and token.text in ")," and cast:
                spots.append(after.column)
            if (
                arrows
                and opener == "("
                and token.text == "("
                and _before_arrow(tokens, partner, number)
            ):
                spots.append(token.column)  # ``f(() => x)`` written ``f() => x)``
            if opener == "(" and token.text == ">" and after.text == ")" and number in angles:
                spots.append(after.column)  # ``new Map<K, V>)`` for ``new Map<K, V>()``
            if token.kind != "word" or token.text[0].isdigit():
                continue  # a number is not called
            # ``f)`` for ``f()``, but not in ``f))``: a doubled closer is as likely.
            next_text = tokens[number + 2].text if number + 2 < len(tokens) else ")"
            joined = token.column + len(token.text) == after.column and next_text != ")"
            if after.text != opener and (after.text not in ")]" or after is tokens[closer]):
                spots.append(token.column + len(token.text))
            elif opener == "(" and after.text == ")" and joined:
                spots.append(token.column + len(token.text))  # ``f)`` for ``f()``
            if used_once(token.text, text):
                spots += [token.column + i for i in range(1, len(token.text))]
        if (
            arrows
            and opener == "("
            and tokens[closer + 1 : closer + 2]
            and tokens[closer + 1].text == "=>"
        ):
            spots.append(tokens[closer].column)  # ``() => x`` written ``) => x``
            if closer and tokens[closer - 1].kind == "word":
                spots.append(tokens[closer - 1].column)  # ``(x) =>`` written ``x) =>``
        for spot in dict.fromkeys(spots):
            yield f"lost {opener}", _replace(lines, index, line[:spot] + opener + line[spot:])


def _unmatched_closers(tokens: list[Token]) -> tuple[list[int], dict[int, int]]:
    """The indices of the closers in ``tokens`` that no opener before them matches, and the
    matched pairs (opener's index to closer's, both ways)."""
    open_: list[int] = []
    unmatched: list[int] = []
    partner: dict[int, int] = {}
    for number, token in enumerate(tokens):
        if token.kind != "punct":
            continue
        if token.text in "([{":
            open_.append(number)
        elif token.text in ")]}":
            if not open_:
                unmatched.append(number)
                continue
            opened = open_.pop()
            partner[opened] = number
            partner[number] = opened
    return unmatched, partner


def _before_arrow(tokens: list[Token], partner: dict[int, int], number: int) -> bool:
    """Whether the ``(`` at ``tokens[number]`` opens an arrow function's parameters."""
    closer = partner.get(number)
    return closer is not None and closer + 1 < len(tokens) and tokens[closer + 1].text == "=>"


def _casts(tokens: list[Token], start: int) -> bool:
    """Whether ``tokens[start:]`` begins with a type (words and ``*``) closed by ``)`` and
    followed by an operand: a cast (``short)m``) whose opener was lost."""
    end = start
    while end < len(tokens) and (tokens[end].kind == "word" or tokens[end].text == "*"):
        end += 1
    if end == start or end + 1 >= len(tokens) or tokens[end].text != ")":
        return False
    follows = tokens[end + 1]
    return follows.kind == "word" or follows.text == "("


def _lost_between_words(
    language: str, lines: list[str], index: int, text: str
) -> Iterator[tuple[str, str]]:
    """Two operands side by side where the language needs something between: the dot of a
    member access (``os path``) or of a number (``1 5``), the comma between items
    (``f(a b)``, ``Set<T> b``, ``f(a {``), the colon of a type (``reason number``, TypeScript
    and Python), of an object's key (``{ value true }``) or of a conditional expression
    (``a ? b  c``). The dot first where the document writes ``.name`` elsewhere and not the
    name alone, the colon where it writes ``: name``, the comma first otherwise."""
    line = lines[index]
    tokens, _ = scan(language, line[: code_end(language, line)])
    words = KEYWORDS.get(language, frozenset()) - _CONTEXTUAL.get(language, frozenset())
    listed = _in_a_list(language, tokens)
    for number, (first, second) in enumerate(itertools.pairwise(tokens)):
        value = first.text in _VALUE_KEYWORDS  # ``this _update()``: a keyword that is an object
        # ``f(int a char b)``: the next parameter's type begins with a keyword.
        typed = (
            language in ("c", "cpp", "java")
            and second.text in _TYPE_WORDS
            and listed[number]
            and first.kind == "word"
        )
        if (first.text in words and not value) or (second.text in words and not typed):
            continue
        braced = second.text == "{" and language.startswith(("javascript", "typescript"))
        if second.kind == "punct" and not braced:
            continue
        if first.kind == "punct" and first.text not in ")]" and not _closes_type(tokens, number):
            continue
        end = first.column + len(first.text)
        if line[end : second.column].strip(" \t") or end == second.column:
            continue
        both_words = first.kind == second.kind == "word"
        dot = both_words and first.text[0].isdigit() == second.text[0].isdigit()
        comma = ("lost , between operands", line[:end] + "," + line[end:])
        dotted = ("lost . between words", line[:end] + "." + line[second.column :])
        # ``print "x"`` is a call that lost its parentheses, not the start of a list.
        starts_call = number == 0 and first.kind == "word" and second.kind == "string"
        proposals = [comma] if listed[number] and not starts_call else []
        if braced or typed:
            yield from ((rule, _replace(lines, index, new)) for rule, new in proposals)
            continue
        if language.startswith("typescript") and _names_a_member(tokens, number + 1):
            # A type's members are separated by ``;`` (``{ width: number height: number }``).
            separated = ("lost ; between members", line[:end] + ";" + line[end:])
            in_type = line.lstrip().startswith(("type ", "interface ", "export type "))
            proposals.insert(0 if in_type else len(proposals), separated)
        if dot:
            first_dot = _member_first(first.text, second.text, text)
            proposals.insert(0 if first_dot else len(proposals), dotted)
        annotates = language.startswith("typescript") or line.lstrip().startswith(
            ("def ", "async def ")
        )  # a Python annotation outside a signature is a statement of its own
        if both_words and annotates:
            annotated = ("lost : before a type", line[:end] + ":" + line[end:])
            # First where the document annotates with that type elsewhere (``: number``).
            proposals.insert(0 if f": {second.text}" in text else len(proposals), annotated)
        if first.kind == "word" and _is_key(language, tokens, number):
            proposals.insert(0, ("lost : after a key", line[:end] + ":" + line[end:]))
        if _open_conditional(tokens, number):
            spot = second.column - 1 if second.column - end > 1 else end
            proposals.insert(0, ("lost : of a conditional", line[:spot] + ":" + line[spot:]))
        for rule, new in proposals:
            yield rule, _replace(lines, index, new)


# Keywords that are names too where they stand (``type`` as a parameter, ``async`` as a key).
_CONTEXTUAL: dict[str, frozenset[str]] = {
    "typescript": frozenset(
        ("type", "declare", "namespace", "readonly", "abstract", "async", "static")
    ),
    "javascript": frozenset(("async", "static")),
}
_CONTEXTUAL["typescriptreact"] = _CONTEXTUAL["typescript"]
_CONTEXTUAL["javascriptreact"] = _CONTEXTUAL["javascript"]
# The keywords that begin a parameter's type in C and Java.
_TYPE_WORDS = frozenset(
    {"int", "char", "short", "long", "unsigned", "signed", "float", "double", "void", "const"}
    | {"struct", "enum", "union", "boolean", "byte", "final"}
)


def _member_first(first: str, second: str, text: str) -> bool:
    """Whether ``first second`` reads likelier as ``first.second`` than as two items: the
    document writes ``.second`` (or ``first.``) elsewhere, and not ``second`` alone as often."""
    if first[0].isdigit():
        return True  # ``1 5``: a number's point
    dotted = len(re.findall(rf"\.\s*{re.escape(second)}\b", text))
    alone = len(re.findall(rf"(?<![.\w]){re.escape(second)}\b", text)) - 1  # less this one
    an_object = f"{first}." in text  # the file reads members of ``first`` elsewhere
    if not dotted:
        return an_object and not alone
    return alone < dotted or an_object


def _generic_angles(language: str, tokens: list[Token]) -> set[int]:
    """The indices of ``<`` and ``>`` that bracket type arguments (``Set<T>``, Java and
    TypeScript): a ``<`` written right after a name, and the ``>`` that closes it."""
    if not language.startswith(("typescript", "java")):
        return set()
    found: set[int] = set()
    open_: list[int] = []
    for number, token in enumerate(tokens):
        if token.text == "<" and number and tokens[number - 1].kind == "word":
            before = tokens[number - 1]
            if before.column + len(before.text) == token.column:
                open_.append(number)
        elif token.text == ">" and open_:
            found.update((open_.pop(), number))
    return found


def _closes_type(tokens: list[Token], number: int) -> bool:
    """Whether ``tokens[number]`` is the ``>`` that closes type arguments (``Set<T> after``)."""
    if tokens[number].text != ">" or not number:
        return False
    return any(t.text == "<" for t in tokens[:number])


def _is_key(language: str, tokens: list[Token], number: int) -> bool:
    """Whether ``tokens[number]`` stands where an object literal's key does (JavaScript and
    TypeScript): right after ``{`` or a comma inside braces."""
    if not language.startswith(("javascript", "typescript")) or not number:
        return False
    if tokens[number - 1].text not in "{,":
        return False
    depth = 0
    for token in reversed(tokens[:number]):
        if token.text in ")]}":
            depth += 1
        elif token.text in "([{":
            if depth == 0:
                return token.text == "{"
            depth -= 1
    return False


def _open_conditional(tokens: list[Token], number: int) -> bool:
    """Whether a conditional expression's ``?`` before ``tokens[number]`` (at its depth) still
    waits for its ``:`` (``a ? b  c``); an optional ``?.``, ``?:`` or ``?)`` is not one."""
    depth = 0
    waiting = 0
    for position in range(number, -1, -1):
        token = tokens[position]
        following = tokens[position + 1].text if position + 1 < len(tokens) else ""
        if token.text in ")]}":
            depth += 1
        elif token.text in "([{":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and token.text == ":":
            waiting -= 1
        elif depth == 0 and token.text == "?" and following not in (".", ":", ")", ",", "?"):
            waiting += 1
    return waiting > 0


def _in_a_list(language: str, tokens: list[Token]) -> list[bool]:
    """For each token, whether it stands among items: inside a bracket (type arguments too),
    or beside a comma at its own depth (``return a, b``)."""
    angles = _generic_angles(language, tokens)
    depth = 0
    depths = []
    enclosed = 0  # the tokens before a closer whose opener is on an earlier line
    for number, token in enumerate(tokens):
        closes = token.text in ")]}" or (token.text == ">" and number in angles)
        if token.kind == "punct" and closes:
            if depth == 0 and token.text in ")]":
                enclosed = number
            depth = max(0, depth - 1)
        depths.append(depth)
        opens = token.text in "([{" or (token.text == "<" and number in angles)
        if token.kind == "punct" and opens:
            depth += 1
    top_commas = any(t.text == "," and d == 0 for t, d in zip(tokens, depths, strict=True))
    return [d > 0 or top_commas or n < enclosed for n, d in enumerate(depths)]


def _misspelt_name(
    language: str, lines: list[str], problem: Diagnostic, text: str
) -> Iterator[tuple[str, str]]:
    """An undefined name one slip from exactly one name the file has or the language
    provides (``lenght`` where the file has ``length``), respelt as that name
    (``daemon/checks/names.py``)."""
    found = respelling(problem, text, language)
    if found is None:
        return
    start, end, meant = found
    line = lines[problem.line]
    fixed = line[:start] + meant + line[end:]
    yield f"misspelt name {line[start:end]} -> {meant}", _replace(lines, problem.line, fixed)


def _names_a_member(tokens: list[Token], index: int) -> bool:
    """Whether ``tokens[index]`` starts a member of an object or type: ``name:``, ``name?:``."""
    rest = [t.text for t in tokens[index + 1 : index + 3]]
    return rest[:1] == [":"] or rest == ["?", ":"]
