"""The slips C's tree-sitter grammar reads as code and a C compiler rejects.
Found without the headers the file includes, which a repair does not have.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from daemon.checks.keywords import misspelt_keywords, used_once
from daemon.checks.syntax import Diagnostic, parse_tree

SOURCE = "c"
# The nodes that hold a declarator's name, descended through to the identifier.
_DECLARATORS = frozenset(
    {
        "init_declarator",
        "pointer_declarator",
        "array_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
    }
)
_SCOPES = frozenset({"compound_statement", "translation_unit", "for_statement"})


# The grammar cannot know which words are types (they come from headers it never sees), so it reads
# any ``word word`` at a statement's start as a declaration. Found here: a misspelt keyword
# (``retrun (int)x;``: a "type" one slip from a C keyword that the file names nowhere else); a lost
# member dot (``strm avail_out = 0;``: a "type" that is a variable declared in an enclosing scope);
# a header's name with a space in it (``#include <Python h>``); a string or character literal that
# a line of a macro's body leaves open (the grammar keeps a ``#define``'s body as text). There is
# no C checker to ask in their place: ``gcc -fsyntax-only`` needs the headers the file includes.
# Each finding is a diagnostic like the parser's, at the word.
def c_gaps(text: str) -> list[Diagnostic]:
    """The slips in a C file that its grammar parsed without an error, in document order."""
    tree, source = parse_tree("c", text)
    found = list(_walk(tree.root_node, source, text))
    return sorted(found, key=lambda d: (d.line, d.column))


def _walk(node: Any, source: bytes, text: str) -> Iterator[Diagnostic]:
    if node.type == "declaration":
        yield from _declaration(node, source, text)
    elif node.type == "preproc_include":
        yield from _include(node, source)
    elif node.type in ("preproc_def", "preproc_function_def"):
        yield from _macro_body(node, source)
    for child in node.children:
        yield from _walk(child, source, text)


def _text(node: Any, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _diagnostic(node: Any, source: bytes, message: str) -> Diagnostic:
    line, column = _position(source, node.start_byte)
    end_line, end_column = _position(source, node.end_byte)
    return Diagnostic(line, column, end_line, end_column, message, SOURCE)


def _position(source: bytes, offset: int) -> tuple[int, int]:
    before = source[:offset]
    line = before.count(b"\n")
    start = before.rfind(b"\n") + 1
    return line, len(before[start:].decode("utf-8", errors="replace"))


def _declared_type(node: Any) -> Any | None:
    """The word a declaration's grammar took for its type: ``T x;`` and ``T (int) f(a);``."""
    kind = node.child_by_field_name("type")
    if kind is None:
        return None
    if kind.type == "type_identifier":
        return kind
    if kind.type == "macro_type_specifier":
        return kind.child_by_field_name("name")
    return None


def _declaration(node: Any, source: bytes, text: str) -> Iterator[Diagnostic]:
    word_node = _declared_type(node)
    if word_node is None:
        return
    word = _text(word_node, source)
    keywords = misspelt_keywords("c", word)
    if keywords and used_once(word, text):
        meant = " or ".join(f"'{k}'" for k in keywords)
        yield _diagnostic(word_node, source, f"unknown type name '{word}': a misspelt {meant}?")
    elif word in _variables_in_scope(node, source):
        yield _diagnostic(
            word_node,
            source,
            f"'{word}' is a variable, not a type: a member access that lost its '.'?",
        )


def _variables_in_scope(node: Any, source: bytes) -> set[str]:
    """The variables declared before ``node`` in the scopes around it (its function's
    parameters included), less the names a typedef or a macro of the file defines."""
    names: set[str] = set()
    scope = node.parent
    while scope is not None:
        if scope.type in _SCOPES:
            for child in scope.children:
                if child.start_byte >= node.start_byte:
                    break
                if child.type == "declaration":
                    names.update(_declared_names(child, source))
        elif scope.type == "function_definition":
            declarator = scope.child_by_field_name("declarator")
            parameters = _parameters(declarator)
            if parameters is not None:
                for parameter in parameters.named_children:
                    names.update(_declared_names(parameter, source))
        scope = scope.parent
    return names - _type_and_macro_names(node, source)


def _parameters(declarator: Any | None) -> Any | None:
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return None if declarator is None else declarator.child_by_field_name("parameters")


def _declared_names(node: Any, source: bytes) -> Iterator[str]:
    for declarator in node.children_by_field_name("declarator"):
        while declarator is not None and declarator.type in _DECLARATORS:
            declarator = declarator.child_by_field_name("declarator")
        if declarator is not None and declarator.type == "identifier":
            yield _text(declarator, source)


def _type_and_macro_names(node: Any, source: bytes) -> set[str]:
    root = node
    while root.parent is not None:
        root = root.parent
    names: set[str] = set()
    stack = [root]
    while stack:
        each = stack.pop()
        if each.type == "type_definition":
            for declarator in each.children_by_field_name("declarator"):
                names.update(_text(n, source) for n in _identifiers(declarator))
        elif each.type in ("preproc_def", "preproc_function_def"):
            name = each.child_by_field_name("name")
            if name is not None:
                names.add(_text(name, source))
        stack.extend(each.children)
    return names


def _identifiers(node: Any) -> Iterator[Any]:
    if node.type in ("type_identifier", "identifier"):
        yield node
    for child in node.children:
        yield from _identifiers(child)


def _include(node: Any, source: bytes) -> Iterator[Diagnostic]:
    path = node.child_by_field_name("path")
    if path is not None and path.type == "system_lib_string" and " " in _text(path, source):
        yield _diagnostic(path, source, "a header name with a space in it: a lost '.'?")


def _macro_body(node: Any, source: bytes) -> Iterator[Diagnostic]:
    body = node.child_by_field_name("value")
    if body is None:
        return
    offset = body.start_byte
    for line in source[body.start_byte : body.end_byte].split(b"\n"):
        opened = _open_quote(line.decode("utf-8", errors="replace"))
        if opened is not None:
            at = offset + len(line.decode("utf-8", errors="replace")[:opened].encode())
            line_number, column = _position(source, at)
            yield Diagnostic(
                line_number,
                column,
                line_number,
                column + 1,
                "a quote in a macro's body that its line does not close",
                SOURCE,
            )
            return
        offset += len(line) + 1


def _open_quote(line: str) -> int | None:
    """Where a literal that ``line`` does not close opens (comments skipped), or None."""
    index = 0
    while index < len(line):
        char = line[index]
        if line.startswith("//", index):
            return None
        if line.startswith("/*", index):
            end = line.find("*/", index + 2)
            if end < 0:
                return None
            index = end + 2
            continue
        if char in "'\"":
            close = index + 1
            while close < len(line) and line[close] != char:
                close += 2 if line[close] == "\\" else 1
            if close >= len(line):
                return index
            index = close
        index += 1
    return None
