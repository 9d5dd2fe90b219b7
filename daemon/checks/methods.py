"""Python methods written without their instance: ``def name()`` directly in a class body."""

from __future__ import annotations

import re

from daemon.cursor import Cursor
from daemon.indentation import indent_of, width

# A definition whose parameter list is closed with nothing in it.
_EMPTY_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+[ \t]*\([ \t]*\)")
_CLASS = re.compile(r"^[ \t]*class\b")
# A decorator that makes a function in a class body take no instance.
_STATIC = re.compile(r"^[ \t]*@[\w.]*staticmethod\b")
# Lines looked at, walking up from the definition to its class.
MAX_LINES_UP = 5000


# In the standard library and the six packages of the real-code benchmark, 3 of 8,026 functions
# defined in a class body take no parameter and are not static methods (2 more are static).
def missing_instance(cursor: Cursor, inserted: str) -> bool:
    """Whether ``inserted`` at ``cursor`` closes the empty parameter list of a function
    defined directly in a class body, not a static method: in real code, a method whose
    ``self`` (or ``cls``) the answer left out."""
    match = _EMPTY_DEF.match(cursor.before + inserted.split("\n", 1)[0])
    if match is None:
        return False
    columns = width(match.group(1))
    if columns == 0:
        return False
    decorators = True  # the lines right above the definition at its indentation
    for index in range(cursor.line - 1, max(-1, cursor.line - 1 - MAX_LINES_UP), -1):
        above = cursor.lines[index]
        stripped = above.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = width(indent_of(above))
        if indent > columns:
            decorators = False
            continue
        if indent == columns:
            if decorators and stripped.startswith("@"):
                if _STATIC.match(above):
                    return False
                continue
            decorators = False
            continue
        return _CLASS.match(above) is not None
    return False
