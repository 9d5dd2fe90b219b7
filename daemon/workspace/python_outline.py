"""The outline of a Python module, read with ``ast``: what its names look like from outside."""

from __future__ import annotations

import ast
import copy
import io
import itertools
import re
import textwrap
import tokenize
from dataclasses import dataclass, field

from daemon.workspace.outline import MAX_SUMMARY_CHARS, Definition, summarize

# Docstrings longer than this many lines are cut.
MAX_DOC_LINES = 12
# A class shows this many fields and methods at most, and stops growing past this many chars.
MAX_MEMBERS = 40
MAX_DEFINITION_CHARS = 1200
# A constant's assignment is shown whole up to this size, else as ``NAME = ...``.
MAX_CONSTANT_LINES = 4
MAX_CONSTANT_CHARS = 400
# How many base classes deep an inherited constructor is looked for.
MAX_BASE_DEPTH = 4
# Methods shown besides public ones.
_SHOWN_DUNDERS = frozenset(
    {"__init__", "__call__", "__enter__", "__exit__", "__iter__", "__getitem__", "__post_init__"}
)
_TOP_LEVEL_START = re.compile(r"(?!(?:else|elif|except|finally)\b)[^\s#)\]}]")


@dataclass(frozen=True)
class Reexport:
    """A name the module imports, and so offers to importers: ``from .core import Thing``."""

    module: str  # the module it comes from ("" for ``from . import x``)
    level: int  # leading dots of a relative import
    name: str | None  # the name imported from that module; None when the module itself


@dataclass
class PythonOutline:
    definitions: dict[str, Definition] = field(default_factory=dict)
    reexports: dict[str, Reexport] = field(default_factory=dict)
    exported: list[str] | None = None  # __all__, when the module states it
    docstring: str | None = None

    def public(self) -> list[Definition]:
        """The definitions an importer of the whole module sees, in the module's order."""
        if self.exported is not None:
            names = [n for n in self.exported if n in self.definitions]
        else:
            names = [n for n in self.definitions if not n.startswith("_")]
        return sorted((self.definitions[n] for n in names), key=lambda d: d.line)

    def summary(self, limit: int = MAX_SUMMARY_CHARS) -> str:
        """The module's public definitions as headers, within ``limit`` characters."""
        lead = ""
        if self.docstring:
            first = self.docstring.strip().split("\n", 1)[0]
            lead = f'"""{_escape(first)}"""\n'
        return summarize(self.public(), lead, limit)


# A function shows its decorators and ``def`` header as written, its docstring and ``...``; a class
# its header, docstring, fields and public methods' headers; a module-level constant its
# assignment, shortened when long. A class that takes its constructor from a base class of the same
# module shows that ``__init__`` too, marked as inherited: at a call ``Error(`` its parameters are
# what the programmer needs. A module that does not parse (mid-edit) is outlined statement by
# statement. Names the module imports are remembered, so a re-exported name can be followed to its
# definition.
def outline_python(source: str) -> PythonOutline:
    """The outline of a module's source; never raises on a source that does not parse."""
    lines = source.split("\n")
    outline = PythonOutline()
    classes: dict[str, ast.ClassDef] = {}
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        for start, chunk in _top_level_chunks(lines):
            try:
                parsed = ast.parse(chunk)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            ast.increment_lineno(parsed, start)
            _collect(parsed.body, lines, outline, classes)
        _inherit_constructors(outline, classes, lines)
        return outline
    outline.docstring = ast.get_docstring(module)
    _collect(module.body, lines, outline, classes)
    _inherit_constructors(outline, classes, lines)
    return outline


def _top_level_chunks(lines: list[str]) -> list[tuple[int, str]]:
    """The module split before each line that starts a top-level statement (decorators stay
    with what they decorate), as (first line, 0-based; text)."""
    starts = [
        i
        for i, line in enumerate(lines)
        if _TOP_LEVEL_START.match(line) and not (i > 0 and lines[i - 1].startswith("@"))
    ]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    bounds = [*starts, len(lines)]
    return [(a, "\n".join(lines[a:b])) for a, b in itertools.pairwise(bounds) if b > a]


def _collect(
    body: list[ast.stmt],
    lines: list[str],
    outline: PythonOutline,
    classes: dict[str, ast.ClassDef],
) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            outline.definitions[node.name] = _definition(node, lines)
            if isinstance(node, ast.ClassDef):
                classes[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            _constant(node, lines, outline)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    reexport = Reexport(node.module or "", node.level, alias.name)
                    outline.reexports[alias.asname or alias.name] = reexport
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    outline.reexports[alias.asname] = Reexport(alias.name, 0, None)
        elif isinstance(node, ast.If | ast.Try):
            # Definitions under ``if TYPE_CHECKING:`` or ``try: ... except ImportError:``.
            _collect(node.body, lines, outline, classes)
            for handler in getattr(node, "handlers", []):
                _collect(handler.body, lines, outline, classes)
            _collect(node.orelse, lines, outline, classes)


def _constant(node: ast.Assign | ast.AnnAssign, lines: list[str], outline: PythonOutline) -> None:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    if not names:
        return
    if names == ["__all__"] and isinstance(node.value, ast.List | ast.Tuple):
        items = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
        outline.exported = [i for i in items if isinstance(i, str)]
        return
    first = node.lineno - 1
    last = (node.end_lineno or node.lineno) - 1
    source = "\n".join(lines[first : last + 1])
    annotation = f": {ast.unparse(node.annotation)}" if isinstance(node, ast.AnnAssign) else ""
    short = f"{names[0]}{annotation} = ..."
    if last - first + 1 > MAX_CONSTANT_LINES or len(source) > MAX_CONSTANT_CHARS:
        source = short
    header = source if "\n" not in source else short
    for name in names:
        outline.definitions[name] = Definition(name, first, source + "\n", header + "\n")


def _method(node: ast.ClassDef, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The method ``name`` the class's own body defines."""
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == name:
            return item
    return None


def _inherit_constructors(
    outline: PythonOutline, classes: dict[str, ast.ClassDef], lines: list[str]
) -> None:
    """Give each class that has no constructor of its own (no ``__init__``, no ``__new__``, no
    decorator that could write one) the ``__init__`` its bases give it, where that is sure."""
    for name, node in classes.items():
        if node.decorator_list or _method(node, "__init__") or _method(node, "__new__"):
            continue
        found = _inherited_constructor(node, classes, depth=0)
        if isinstance(found, tuple) and name in outline.definitions:
            outline.definitions[name] = _definition(node, lines, inherited=found)


def _inherited_constructor(
    node: ast.ClassDef, classes: dict[str, ast.ClassDef], depth: int
) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | bool:
    """The ``__init__`` the class's bases give it and the base that defines it, looked for
    depth first (Python's order for a single line of bases). True when no base defines one
    (they reach ``object``); False when it cannot be said for sure: a base this module does
    not define (it may have a constructor of its own), a decorated base, a ``__new__``, or
    more than ``MAX_BASE_DEPTH`` bases deep."""
    if depth >= MAX_BASE_DEPTH:
        return False
    for base in node.bases:
        parent = classes.get(base.id) if isinstance(base, ast.Name) else None
        if parent is None or parent is node or parent.decorator_list:
            return False
        if _method(parent, "__new__"):
            return False
        init = _method(parent, "__init__")
        if init is not None:
            return parent.name, init
        found = _inherited_constructor(parent, classes, depth + 1)
        if found is not True:
            return found
    return True


def _definition(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
    lines: list[str],
    inherited: tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None = None,
) -> Definition:
    header = _header(node, lines)
    indent = " " * 4
    parts = [header]
    doc = _docstring(node, lines, indent, first_paragraph=isinstance(node, ast.ClassDef))
    if doc:
        parts.append(doc)
    if inherited is not None:
        base, init = inherited
        parts.append(
            f"{indent}# __init__ inherited from {base}\n"
            + _header(init, lines, indent)
            + f"\n{indent}    ..."
        )
    if isinstance(node, ast.ClassDef):
        used = sum(len(p) for p in parts)
        members = _members(node, lines, indent, used)
        parts += members
        if not members and inherited is None:
            parts.append(f"{indent}...")
        short = header + "\n"
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _shown(item.name):
                method = _header(item, lines, indent) + f"\n{indent}    ...\n"
                if len(short) + len(method) > MAX_SUMMARY_CHARS // 2:
                    break
                short += method
        if short == header + "\n":
            short += f"{indent}...\n"
    else:
        parts.append(f"{indent}...")
        short = f"{header}\n{indent}..."
    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    text = "\n".join(p.rstrip("\n") for p in parts) + "\n"
    return Definition(node.name, start, text, short.rstrip("\n") + "\n")


def _shown(name: str) -> bool:
    return not name.startswith("_") or name in _SHOWN_DUNDERS


def _members(node: ast.ClassDef, lines: list[str], indent: str, used: int) -> list[str]:
    """The class's public methods, nested classes and fields, in the class's order, within
    ``MAX_MEMBERS`` and ``MAX_DEFINITION_CHARS``: methods are kept first, then fields (an enum
    of a hundred values still shows its methods); ``...`` marks what was left out."""
    methods: list[tuple[int, str]] = []
    fields: list[tuple[int, str]] = []
    for index, item in enumerate(node.body):
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _shown(item.name):
            piece = _header(item, lines, indent)
            doc = _docstring(item, lines, indent + "    ", first_line_only=True)
            methods.append((index, piece + ("\n" + doc if doc else "") + f"\n{indent}    ..."))
        elif isinstance(item, ast.ClassDef) and _shown(item.name):
            methods.append((index, _header(item, lines, indent) + f"\n{indent}    ..."))
        elif isinstance(item, ast.AnnAssign | ast.Assign):
            first, last = item.lineno - 1, (item.end_lineno or item.lineno) - 1
            source = "\n".join(lines[first : last + 1])
            if last == first and len(source) <= MAX_CONSTANT_CHARS:
                fields.append((index, indent + source.strip()))
    kept: list[tuple[int, str]] = []
    for index, piece in [*methods, *fields]:
        if len(kept) >= MAX_MEMBERS or used + len(piece) > MAX_DEFINITION_CHARS:
            continue
        kept.append((index, piece))
        used += len(piece) + 1
    members = [piece for _, piece in sorted(kept)]
    if len(kept) < len(methods) + len(fields):
        members.append(f"{indent}...")
    return members


def _header(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, lines: list[str], indent: str = ""
) -> str:
    """Decorators and the ``def``/``class`` line(s) as written, up to the colon, re-indented."""
    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    body_line = node.body[0].lineno - 1 if node.body else node.lineno - 1
    span = lines[start : max(body_line, node.lineno - 1) + 1]
    text = textwrap.dedent("\n".join(span))
    end = _header_end(text, node.lineno - 1 - start)
    if end is None:
        # Written so that the tokenizer cannot follow it: the header as ``ast`` renders it.
        bare = copy.copy(node)
        bare.body = [ast.Expr(ast.Constant(...))]
        text = ast.unparse(bare).rsplit("\n", 1)[0]
        return textwrap.indent(text, indent)
    return textwrap.indent(text[:end], indent)


def _header_end(text: str, def_line: int) -> int | None:
    """The offset just after the colon that ends the header in ``text``, whose line
    ``def_line`` holds the ``def``/``class`` keyword."""
    offsets = [0]
    for line in text.split("\n"):
        offsets.append(offsets[-1] + len(line) + 1)
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            row, col = token.start
            if row - 1 < def_line:
                continue
            if token.type == tokenize.OP:
                if token.string in "([{":
                    depth += 1
                elif token.string in ")]}":
                    depth -= 1
                elif token.string == ":" and depth == 0:
                    return offsets[row - 1] + col + 1
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return None


def _docstring(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
    lines: list[str],
    indent: str,
    first_line_only: bool = False,
    first_paragraph: bool = False,
) -> str:
    """The docstring as written when it is short, else cut: to its first line, its first
    paragraph (a class's: its methods say the rest), or ``MAX_DOC_LINES`` lines."""
    doc = ast.get_docstring(node)
    if not doc:
        return ""
    first = node.body[0]
    span = (first.end_lineno or first.lineno) - first.lineno + 1
    kept = doc.strip().split("\n")
    if first_paragraph and "" in kept:
        kept = kept[: kept.index("")]
    short = len(kept) == len(doc.strip().split("\n"))
    if not first_line_only and short and span <= MAX_DOC_LINES:
        source = "\n".join(lines[first.lineno - 1 : first.end_lineno or first.lineno])
        return textwrap.indent(textwrap.dedent(source), indent)
    if first_line_only:
        kept = kept[:1]
    elif len(kept) > MAX_DOC_LINES:
        kept = [*kept[: MAX_DOC_LINES - 1], "..."]
    body = "\n".join(kept)
    if "\n" in body:
        return textwrap.indent(f'"""{_escape(body)}\n"""', indent)
    return f'{indent}"""{_escape(body)}"""'


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
