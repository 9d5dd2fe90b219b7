"""Which context snippets a fast-path completion is shown: those its line names."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from daemon.protocol import ContextSnippet

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
# A definition's keyword and its name, or a name assigned or declared at a line's start.
_DEFINED = re.compile(
    r"\b(?:def|class|function|func|fn|struct|interface|type|enum|trait|const|let|var|val)"
    r"\s+\*?\s*([A-Za-z_$][\w$]*)"
    r"|^[ \t]*(?:export\s+)?([A-Za-z_$][\w$]*)\s*(?::[^=\n]*)?=(?!=)",
    re.MULTILINE,
)
# A word being typed must be this long before it is taken to mean a longer name.
MIN_PARTIAL = 3


def defined_names(snippet: ContextSnippet) -> frozenset[str]:
    """The names ``snippet`` defines: its imported name, its definitions, its module's name."""
    names = {a or b for a, b in _DEFINED.findall(snippet.text)}
    if snippet.name:
        names.add(snippet.name)
    stem = PurePosixPath(snippet.path.replace("\\", "/")).stem
    if stem and stem != "__init__":
        names.add(stem)
    else:
        parent = PurePosixPath(snippet.path.replace("\\", "/")).parent.name
        if parent:
            names.add(parent)
    return frozenset(n for n in names if n)


def names_on_line(before_cursor: str) -> tuple[frozenset[str], str]:
    """The identifiers of the line's text before the cursor, and the word being typed (the
    identifier that ends at the cursor, or "")."""
    words = _IDENTIFIER.findall(before_cursor)
    typing = words[-1] if words and before_cursor.endswith(words[-1]) else ""
    return frozenset(words), typing


def named_by(names: frozenset[str], typing: str, defined: Iterable[str]) -> bool:
    """Whether the line uses one of ``defined``, or the word being typed begins one."""
    for name in defined:
        if name in names:
            return True
        if len(typing) >= MIN_PARTIAL and name.startswith(typing):
            return True
    return False


# A snippet is kept when an identifier of the line before the cursor is a name it defines (its
# name, a definition in its text, or its module's name), or the word being typed begins one.
# Elsewhere snippets cost lines on real code: on a blank line, or in a line using only the file's
# own names, the model follows a snippet instead of the file. Deep bodies keep every snippet: they
# are written from the definition's line, not from the text the cursor is on.
def snippets_for_line(
    snippets: Sequence[ContextSnippet], before_cursor: str
) -> list[ContextSnippet]:
    """The snippets whose definitions the line before the cursor names, in the request's
    order (an empty line names none)."""
    names, typing = names_on_line(before_cursor)
    if not names:
        return []
    return [s for s in snippets if named_by(names, typing, defined_names(s))]
