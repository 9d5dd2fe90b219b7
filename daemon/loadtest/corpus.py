"""Real code for the load test: standard-library files drawn with a seed, places in them, typos.
Nothing here is code written for the test."""

from __future__ import annotations

import ast
import random
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

SIZE = (2_000, 40_000)  # characters of a file that is drawn
# Tests, IDLE, 2to3's data, demos, generated codec tables, other packages: not typical code.
SKIPPED_DIRS = {
    "test",
    "tests",
    "idlelib",
    "lib2to3",
    "turtledemo",
    "encodings",
    "site-packages",
    "dist-packages",
    "__pycache__",
}
MIN_STATEMENTS = 12  # one-line statements a file must have to be drawn
# Statements of one line that are typed as a line (not the docstring's expression).
SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr, ast.Raise, ast.Assert)
CUT_AFTER = ("(", "= ", ".")  # where a place's cursor may stand: just after one of these
OPENERS = ("def ", "class ", "if ", "elif ", "else", "for ", "while ", "with ", "try", "except")


class CorpusError(RuntimeError):
    """Too few files to draw from (the message says where it looked)."""


# Nothing here is code written for the test: the files are the interpreter's own library (tests,
# IDLE, 2to3's data and codec tables left out), drawn with a fixed seed, so the same machine sends
# the same documents. A place is a one-line statement typed up to a point (after a ``(``, an ``=``
# or a ``.``), with the rest of that line gone, as while someone is typing it; the lines after it
# stay, as in an editor. A typo is a block opener's colon lost, kept only where Python's parser
# then rejects the file.
@dataclass(frozen=True)
class Place:
    """A document with its cursor: what a completion request sends."""

    path: str  # shown and used for the language only: the daemon never opens it
    text: str
    line: int  # 0-based, as on the wire
    column: int

    def body(self, **extra: object) -> dict[str, object]:
        body: dict[str, object] = {
            "text": self.text,
            "line": self.line,
            "column": self.column,
            "path": self.path,
        }
        body.update(extra)
        return body

    def typed(self, typed: str) -> Place:
        """The same place after ``typed`` was typed at the cursor (the cursor after it)."""
        lines = self.text.split("\n")
        current = lines[self.line]
        lines[self.line] = current[: self.column] + typed + current[self.column :]
        text = "\n".join(lines)
        before = "\n".join([*lines[: self.line], current[: self.column] + typed])
        line = before.count("\n")
        return Place(self.path, text, line, len(before) - (before.rfind("\n") + 1))


@dataclass
class Document:
    """A file of the corpus: its path as shown, its text, and its one-line statements."""

    path: str
    text: str
    statements: list[int] = field(default_factory=list)  # 0-based lines

    def place(self, line: int, rng: random.Random) -> Place | None:
        """A cursor inside ``line`` after a ``(``, ``= `` or ``.``, the rest of the line gone."""
        lines = self.text.split("\n")
        code = lines[line]
        start = len(code) - len(code.lstrip())
        cuts = [
            i + len(mark)
            for mark in CUT_AFTER
            for i in range(start + 3, len(code) - 3)
            if code.startswith(mark, i)
        ]
        if not cuts:
            return None
        column = rng.choice(sorted(cuts))
        lines[line] = code[:column]
        return Place(self.path, "\n".join(lines), line, column)

    def with_typo(self, rng: random.Random) -> str | None:
        """The text with one block opener's colon lost, where the parser then fails."""
        lines = self.text.split("\n")
        openers = [
            i
            for i, code in enumerate(lines)
            if code.rstrip().endswith(":") and code.lstrip().startswith(OPENERS)
        ]
        rng.shuffle(openers)
        for i in openers[:8]:
            code = lines[i].rstrip()
            broken = "\n".join([*lines[:i], code[:-1], *lines[i + 1 :]])
            try:
                ast.parse(broken)
            except SyntaxError:
                return broken
        return None


def statements(tree: ast.AST) -> list[int]:
    """The 0-based lines that hold a whole one-line statement (docstrings left out)."""
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, SIMPLE) or node.lineno != node.end_lineno:
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        found.add(node.lineno - 1)
    return sorted(found)


def library_files(root: Path) -> list[Path]:
    """The library's Python files of a drawable size, in a stable order."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if SKIPPED_DIRS.intersection(relative.parts[:-1]) or relative.name.startswith("test"):
            continue
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if SIZE[0] <= size <= SIZE[1]:
            found.append(path)
    return found


def _read(path: Path, root: Path) -> Document | None:
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    lines = [n for n in statements(tree) if len(text.split("\n")[n].strip()) >= 12]
    if len(lines) < MIN_STATEMENTS:
        return None
    return Document(str(path.relative_to(root)), text, lines)


def draw_documents(count: int, seed: int, root: Path | None = None) -> list[Document]:
    """``count`` files of the standard library (or of ``root``), drawn with ``seed``."""
    root = root or Path(sysconfig.get_paths()["stdlib"])
    candidates = library_files(root)
    random.Random(seed).shuffle(candidates)
    drawn: list[Document] = []
    for path in candidates:
        document = _read(path, root)
        if document is not None:
            drawn.append(document)
        if len(drawn) == count:
            return drawn
    raise CorpusError(f"{root} has {len(drawn)} Python files to draw from; {count} are needed")
