"""Misspelt names: an undefined name one typing slip from exactly one name the file has."""

from __future__ import annotations

import builtins
import re
from collections import Counter

from daemon.checks.lint import UNDEFINED_NAME, undefined_names
from daemon.checks.syntax import Diagnostic
from daemon.checks.typescript import SCRIPT_LANGUAGES, script_undefined_names

NAME = re.compile(r"(?<![\w$])[A-Za-z_$][\w$]*")
# An undefined name shorter than this is not taken for a slip.
SHORTEST = 4
# The code of an undefined name that TypeScript's checker reports (its "Cannot find name").
SCRIPT_UNDEFINED_NAME = "TS2304"
# The codes of the undefined names a repair may respell.
UNDEFINED_NAMES = frozenset({UNDEFINED_NAME, SCRIPT_UNDEFINED_NAME})
_SUGGESTED = re.compile(r"Did you mean `([^`]+)`\?")


def one_slip_apart(word: str, other: str) -> bool:
    """Whether one typing slip turns ``other`` into ``word``: two neighbouring letters
    swapped, one letter dropped, one added, or one replaced."""
    if word == other or abs(len(word) - len(other)) > 1:
        return False
    if len(word) == len(other):
        differ = [i for i in range(len(word)) if word[i] != other[i]]
        if len(differ) == 1:
            return True
        first, *rest = differ
        return (
            len(differ) == 2
            and rest[0] == first + 1
            and word[first] == other[first + 1]
            and word[first + 1] == other[first]
        )
    short, long_ = (word, other) if len(word) < len(other) else (other, word)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def builtin_names(language: str) -> frozenset[str]:
    """The names a file of ``language`` may use without defining them: Python's builtins,
    the globals of JavaScript and TypeScript."""
    return _BUILTINS.get(language.removesuffix("react"), frozenset())


_JS_GLOBALS = """Array Boolean Date Error JSON Map Math Number Object Promise Reflect RegExp Set
    String Symbol console document exports module process require window"""
_BUILTINS = {
    "python": frozenset(name for name in dir(builtins) if not name.startswith("__")),
    "javascript": frozenset(_JS_GLOBALS.split()),
    "typescript": frozenset(_JS_GLOBALS.split()),
}


def respelt(name: str, text: str, language: str) -> str | None:
    """The one name of ``text`` (or of the language's builtins) that ``name`` is one slip
    from, or None when there is none or more than one."""
    return _respelt(name, Counter(NAME.findall(text)), language)


def _respelt(
    name: str, used: Counter[str], language: str, suggested: str | None = None
) -> str | None:
    """``respelt`` with the file's names counted (once for all its undefined names), and the
    name the checker suggests known too."""
    if len(name) < SHORTEST or used[name] > 1:
        return None
    known = set(used) | builtin_names(language) | ({suggested} if suggested else set())
    close = [w for w in known if w != name and one_slip_apart(name, w)]
    return close[0] if len(close) == 1 else None


def names_checked(language: str) -> bool:
    """Whether misspelt names are looked for in ``language`` (its checker may be missing)."""
    return language == "python" or language in SCRIPT_LANGUAGES


# A name the language's checker finds undefined (ruff's F821 for Python, the TypeScript compiler's
# type checker for JavaScript and TypeScript) that is one slip (two neighbouring letters swapped,
# one letter dropped, added or replaced) from exactly one name of the file or of the language's
# globals (or the one TypeScript suggests) is most often that name: ``widht`` for the parameter
# ``width``. Where two or more are as close, or none is, the name is left to the author (a module's
# globals come from places the file does not show). So is a name of three letters or fewer (``sub``
# is one slip from ``sum``, and most often a function of another module) and one the file uses more
# than once (a slip is made once). Shared by the repair and the language server's quick fixes.
def misspelt_names(text: str, language: str = "python") -> list[Diagnostic] | None:
    """The checker's undefined names in ``text`` that are one slip from exactly one name it
    knows (None when the language has no checker for names here: ruff for Python, the
    TypeScript compiler for JavaScript and TypeScript)."""
    found = _undefined(text, language)
    if found is None:
        return None
    lines, used = text.split("\n"), Counter(NAME.findall(text))
    return [d for d in found if _respelling(d, lines, used, language) is not None]


def _undefined(text: str, language: str) -> list[Diagnostic] | None:
    if language == "python":
        return undefined_names(text)
    found = script_undefined_names(language, text)
    if found is None:
        return None
    problems = []
    for each in found:
        message = f"Cannot find name `{each.name}`."
        if each.suggestion:
            message += f" Did you mean `{each.suggestion}`?"
        end = each.column + len(each.name)
        code = SCRIPT_UNDEFINED_NAME
        problems.append(Diagnostic(each.line, each.column, each.line, end, message, "tsc", code))
    return problems


def respelling(
    problem: Diagnostic, text: str, language: str = "python"
) -> tuple[int, int, str] | None:
    """Where the undefined name of ``problem`` starts and ends on its line, and what it is one
    slip from; None when that is not one name."""
    return _respelling(problem, text.split("\n"), Counter(NAME.findall(text)), language)


def _respelling(
    problem: Diagnostic, lines: list[str], used: Counter[str], language: str
) -> tuple[int, int, str] | None:
    if problem.line >= len(lines):
        return None
    found = NAME.match(lines[problem.line], problem.column)
    if found is None:
        return None
    suggested = _SUGGESTED.search(problem.message)
    meant = _respelt(found.group(), used, language, suggested.group(1) if suggested else None)
    return (found.start(), found.end(), meant) if meant else None
