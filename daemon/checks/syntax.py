"""Syntax errors from real parsers, as diagnostics: the judge of whether code parses."""

from __future__ import annotations

import ast
import functools
import importlib
import logging
import re
import threading
import warnings
from dataclasses import dataclass
from typing import Any

from daemon.checks.c_macros import without_macro_errors

log = logging.getLogger(__name__)

MAX_DIAGNOSTICS = 50
_MESSAGE_TEXT = 30  # characters of unexpected text quoted in a message

# LSP language id -> (grammar module, function returning the language pointer).
_GRAMMARS: dict[str, tuple[str, str]] = {
    "javascript": ("tree_sitter_javascript", "language"),
    "javascriptreact": ("tree_sitter_javascript", "language"),  # the JS grammar parses JSX
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "typescriptreact": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}

# Every byte but UTF-8 continuation bytes: deleting these leaves one byte per extra byte a
# multi-byte character takes, so the difference of lengths counts code points.
_NOT_CONTINUATION = bytes(range(0x80)) + bytes(range(0xC0, 0x100))
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Diagnostic:
    """One problem in a document; lines and columns are 0-based, columns in code points."""

    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    source: str  # "python", "tree-sitter", "ruff"
    code: str | None = None  # a linter rule id, e.g. "F821"
    insert: str | None = None  # a token the parser knows is missing, to insert at (line, column)


class UnsupportedLanguage(ValueError):
    """No parser for this language (or its grammar wheel is not installed)."""

    def __init__(self, language: str) -> None:
        self.language = language
        names = ", ".join(sorted(supported_languages()))
        super().__init__(f"no syntax checker for language {language!r}; supported: {names}")


# --- tree-sitter grammars and parsers -----------------------------------------------------------

_languages: dict[str, Any] = {}  # language id -> tree_sitter.Language, or None when unavailable
_languages_lock = threading.Lock()
# tree-sitter parsers are not thread-safe and cheap to make: each thread gets its own.
_local = threading.local()


# Python is checked by the interpreter's own compiler, so "parses" means what python itself would
# accept; the other languages by tree-sitter grammars, one wheel each, imported lazily, so a
# missing wheel only makes its language unsupported.
def _grammar(language: str) -> Any:
    """The tree_sitter.Language for ``language``, or None when its wheel is missing."""
    with _languages_lock:
        if language in _languages:
            return _languages[language]
        module_name, function = _GRAMMARS[language]
        grammar: Any = None
        try:
            import tree_sitter

            module = importlib.import_module(module_name)
            grammar = tree_sitter.Language(getattr(module, function)())
        except Exception as exc:  # missing wheel, or one built for another tree-sitter ABI
            log.debug("no tree-sitter grammar for %s: %s", language, exc)
        _languages[language] = grammar
        return grammar


def _parser(language: str) -> Any:
    parsers: dict[str, Any] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        grammar = _grammar(language)
        if grammar is None:
            raise UnsupportedLanguage(language)
        import tree_sitter

        parser = parsers[language] = tree_sitter.Parser(grammar)
    return parser


def supported_languages() -> frozenset[str]:
    """LSP language ids ``check_syntax`` accepts: Python, and each grammar that is installed."""
    return frozenset({"python"} | {name for name in _GRAMMARS if _grammar(name) is not None})


def _normalize(language: str) -> str:
    name = language.strip().lower()
    if name != "python" and (name not in _GRAMMARS or _grammar(name) is None):
        raise UnsupportedLanguage(language)
    return name


# --- tree-sitter diagnostics --------------------------------------------------------------------


def _encode(text: str) -> bytes:
    # surrogatepass: a lone surrogate (from a JSON \ud800 escape) must not make checking fail.
    return text.encode("utf-8", "surrogatepass")


# Positions are 0-based lines and code-point columns, as on the wire (daemon.protocol): tree-sitter
# reports byte columns and CPython 1-based ones, and both are converted here.
def _column(source: bytes, byte_offset: int) -> int:
    """The code-point column of a byte offset: code points since the line's start."""
    start = source.rfind(b"\n", 0, byte_offset) + 1
    segment = source[start:byte_offset]
    return len(segment) - len(segment.translate(None, delete=_NOT_CONTINUATION))


def _shorten(raw: bytes) -> str:
    text = " ".join(raw.decode("utf-8", "replace").split())
    return text if len(text) <= _MESSAGE_TEXT else text[: _MESSAGE_TEXT - 1] + "…"


def _insertable(node: Any) -> str | None:
    """The text of a missing token, when the grammar names it literally.

    A missing *named* node (an identifier, an expression) has no text to insert, and hidden or
    external tokens have names, not text.
    """
    kind = node.type
    if node.is_named or not kind or kind.startswith("_") or any(ch.isspace() for ch in kind):
        return None
    return str(kind)


def _tree_diagnostics(root: Any, source: bytes, limit: int) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    stack = [root]  # explicit stack: 10,000 nested brackets make a tree that deep
    while stack and len(found) < limit:
        node = stack.pop()
        start, end = node.start_point, node.end_point
        if node.is_missing:
            insert = _insertable(node)
            if insert is not None:
                message = f"missing '{insert}'"
            else:
                message = "missing " + node.type.strip("_").replace("_", " ")
            column = _column(source, node.start_byte)
            found.append(
                Diagnostic(start[0], column, start[0], column, message, "tree-sitter", None, insert)
            )
        elif node.is_error:
            shown = _shorten(source[node.start_byte : node.end_byte])
            message = f"unexpected '{shown}'" if shown else "syntax error"
            found.append(
                Diagnostic(
                    start[0],
                    _column(source, node.start_byte),
                    end[0],
                    _column(source, node.end_byte),
                    message,
                    "tree-sitter",
                )
            )
            # Its children are the text the parser could not place: nothing more to learn.
        elif node.has_error:
            stack.extend(reversed(node.children))
    if not found and root.has_error:  # cannot happen per tree-sitter's contract; stay safe
        found.append(Diagnostic(0, 0, 0, 0, "syntax error", "tree-sitter"))
    return found


def parse_tree(language: str, text: str) -> tuple[Any, bytes]:
    """The grammar's tree of ``text`` and the bytes it was parsed from (its offsets are
    byte offsets into them)."""
    source = _encode(text)
    return _parser(language).parse(source), source


# --- Python -------------------------------------------------------------------------------------

# warnings.catch_warnings swaps process-wide state: serialise our own uses of it.
_warnings_lock = threading.Lock()


def _lines(text: str) -> list[str]:
    # The line breaks CPython's tokenizer honours; str.splitlines also splits on \f, \x1c...
    return _LINE_BREAK.split(text)


def _clamp(lines: list[str], line: int, column: int) -> tuple[int, int]:
    line = min(max(line, 0), len(lines) - 1)
    return line, min(max(column, 0), len(lines[line]))


def _python_error(exc: SyntaxError, text: str) -> Diagnostic:
    lines = _lines(text)
    message = exc.msg or "invalid syntax"
    if exc.lineno is None and "\x00" in text:
        # CPython names no position for a null byte: point at the first one.
        index = text.index("\x00")
        before = _lines(text[:index])
        line, column = len(before) - 1, len(before[-1])
        return Diagnostic(line, column, line, column + 1, message, "python")
    line, column = _clamp(lines, (exc.lineno or 1) - 1, (exc.offset or 1) - 1)
    end_line, end_column = line, column
    if exc.end_lineno is not None and exc.end_offset is not None:
        candidate = _clamp(lines, exc.end_lineno - 1, exc.end_offset - 1)
        if candidate >= (line, column):  # CPython uses 0 and -1 for "no end"
            end_line, end_column = candidate
    # CPython only says "expected ':'" where a colon is the one token missing at that point.
    insert = ":" if message == "expected ':'" else None
    return Diagnostic(line, column, end_line, end_column, message, "python", None, insert)


def _check_python(text: str) -> list[Diagnostic]:
    try:
        with _warnings_lock, warnings.catch_warnings():
            # An invalid escape warns; under -W error it would become a SyntaxError.
            warnings.simplefilter("ignore")
            # The whole compiler, not only the parser: it also refuses `return` outside a
            # function, `break` outside a loop, a bad `nonlocal`, duplicate arguments...
            compile(text, "<file>", "exec", dont_inherit=True)
    except SyntaxError as exc:  # IndentationError and TabError included
        return [_python_error(exc, text)]
    except ValueError as exc:  # null bytes: ValueError on some Pythons, SyntaxError on others
        return [_python_error(SyntaxError(str(exc)), text)]
    except (RecursionError, MemoryError):  # the parser's stack overflowed: deeply nested input
        return [Diagnostic(0, 0, 0, 0, "too deeply nested to parse", "python")]
    return []


# The parser's flags for text that may stop anywhere: input that wants more (an open bracket,
# string or block, a line continued) raises "incomplete input" instead of an error at its end.
_INCOMPLETE_INPUT = 0x4000  # PyCF_ALLOW_INCOMPLETE_INPUT, as codeop uses it
_DONT_IMPLY_DEDENT = 0x200  # PyCF_DONT_IMPLY_DEDENT
_CUT_TEXT_FLAGS = ast.PyCF_ONLY_AST | _INCOMPLETE_INPUT | _DONT_IMPLY_DEDENT


def python_cut_error(text: str) -> Diagnostic | None:
    """The syntax error of Python ``text`` cut where it ends that no text after it could mend,
    or None: where it parses, or only wants more (an open bracket, string or block, a line
    continued with a backslash). The parser alone judges (not the compiler: a ``nonlocal``
    may be bound below), and indentation is not judged (an answer's is fitted later)."""
    try:
        with _warnings_lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<file>", "exec", _CUT_TEXT_FLAGS, dont_inherit=True)
    except IndentationError:  # TabError included
        return None
    except SyntaxError as exc:
        return None if exc.msg == "incomplete input" else _python_error(exc, text)
    except (ValueError, RecursionError, MemoryError):  # null bytes; too deeply nested
        return None
    return None


# --- The interface ------------------------------------------------------------------------------


def check_syntax(language: str, text: str) -> list[Diagnostic]:
    """Syntax errors in ``text``, in document order; [] when it parses.

    Raises UnsupportedLanguage for a language without a parser.
    """
    return list(_diagnostics(_normalize(language), text))


# One completion parses the same document several times: the document without the answer for
# each candidate verified (and for the gap's rules), with each answer for the checks after.
# The last few results are kept, so the document without the answer is parsed once.
@functools.lru_cache(maxsize=16)
def _diagnostics(name: str, text: str) -> tuple[Diagnostic, ...]:
    if name == "python":
        return tuple(_check_python(text))
    found = _grammar_errors(name, text)
    if found and name == "c":  # what only the preprocessor understands is not an error
        found = without_macro_errors(text, found, lambda view: _grammar_errors("c", view))
    return tuple(found)


def _grammar_errors(name: str, text: str) -> list[Diagnostic]:
    tree, source = parse_tree(name, text)
    if not tree.root_node.has_error:
        return []
    found = _tree_diagnostics(tree.root_node, source, MAX_DIAGNOSTICS)
    return sorted(found, key=lambda d: (d.line, d.column, d.end_line, d.end_column))


def parses(language: str, text: str) -> bool:
    """Whether ``text`` parses without error. Raises UnsupportedLanguage like check_syntax."""
    name = _normalize(language)
    if name in ("python", "c"):
        return not check_syntax(name, text)
    tree, _ = parse_tree(name, text)
    return not tree.root_node.has_error
