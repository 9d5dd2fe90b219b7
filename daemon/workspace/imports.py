"""What a document imports from its own workspace, found with the language's own import rules."""

from __future__ import annotations

import ast
import functools
import json
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from daemon.workspace.outline import Definition
from daemon.workspace.python_outline import PythonOutline, outline_python
from daemon.workspace.script_outline import Dialect, ScriptImport, ScriptOutline, outline_script

log = logging.getLogger(__name__)

# Files larger than this are not read for their outline.
MAX_FILE_BYTES = 512 * 1024
# The document is scanned for imports in its first this many characters.
MAX_SCAN_CHARS = 1024 * 1024
# How many re-exports are followed to find where a name is defined.
MAX_REEXPORT_DEPTH = 4
# Outlines cached, in all.
MAX_CACHED = 512
_SNIFF_BYTES = 8192

PYTHON_SUFFIXES = (".py", ".pyi")
SCRIPT_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_DIALECTS: dict[str, Dialect] = {
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
}
# A TypeScript import of "./x.js" names the file that compiles to it: "./x.ts".
_COMPILED_FROM = {".js": (".ts", ".tsx"), ".mjs": (".mts",), ".cjs": (".cts",), ".jsx": (".tsx",)}
_PYTHON_IMPORT_START = re.compile(r"[ \t]*(?:from|import)[ \t]")
_PYTHON_LANGUAGES = frozenset({"python"})
_SCRIPT_LANGUAGES = frozenset({"typescript", "typescriptreact", "javascript", "javascriptreact"})


@dataclass(frozen=True)
class Imported:
    """A definition (or a whole module's outline) the document imports from the workspace."""

    file: Path  # the file it is in, resolved
    name: str | None  # the name imported; None for a whole module
    alias: str  # how the document refers to it
    text: str  # what it looks like from outside
    line: int  # 0-based line of the file where it starts
    position: int  # the order of its import in the document


# -- the outline cache ---------------------------------------------------------------------
T = TypeVar("T")


class OutlineCache:
    """Outlines of files, kept while the file's (mtime, size) stays the same."""

    def __init__(self, limit: int = MAX_CACHED) -> None:
        self.limit = limit
        self._items: OrderedDict[tuple[Path, str], tuple[int, int, object]] = OrderedDict()
        self._lock = threading.Lock()
        self.parsed = 0  # outlines computed (not found in the cache)

    def get(self, file: Path, kind: str, make: Callable[[str], T]) -> T | None:
        """The outline of ``file`` made by ``make`` from its text; None when the file cannot
        be read, is over ``MAX_FILE_BYTES`` or looks binary."""
        try:
            stat = file.stat()
        except OSError:
            return None
        if stat.st_size > MAX_FILE_BYTES:
            return None
        key = (file, kind)
        with self._lock:
            found = self._items.get(key)
            if found is not None and found[:2] == (stat.st_mtime_ns, stat.st_size):
                self._items.move_to_end(key)
                return found[2]  # type: ignore[return-value]
        text = _read(file)
        outline = make(text) if text is not None else None  # an unreadable file is cached too
        with self._lock:
            self.parsed += 1
            self._items[key] = (stat.st_mtime_ns, stat.st_size, outline)
            self._items.move_to_end(key)
            while len(self._items) > self.limit:
                self._items.popitem(last=False)
        return outline


OUTLINES = OutlineCache()


def _read(file: Path) -> str | None:
    try:
        with file.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_FILE_BYTES or b"\x00" in data[:_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def inside(root: Path, file: Path) -> Path | None:
    """``file`` resolved, when it is an existing regular file inside ``root``; else None."""
    if not file.is_file():  # one stat, before resolving anything
        return None
    try:
        resolved = file.resolve()
        real_root = _real_root(root)
    except (OSError, RuntimeError):
        return None
    return resolved if real_root in resolved.parents else None


@functools.lru_cache(maxsize=64)
def _real_root(root: Path) -> Path:
    return root.resolve()


# -- the entry point -----------------------------------------------------------------------
# Only files inside the workspace root are read (after symlinks are resolved), none over
# MAX_FILE_BYTES and none that looks binary; each file's outline is cached by (path, mtime, size).
# The document itself is scanned only for its import statements, so a document that does not parse
# while it is being typed still has its imports found.
def imported_definitions(
    path: Path,
    text: str,
    root: Path,
    language: str | None = None,
    cache: OutlineCache = OUTLINES,
) -> list[Imported]:
    """What the document ``path`` (with the content ``text``) imports from the workspace
    ``root``, in the order of its imports; the document itself is never among them."""
    kind = _kind(path, language)
    if kind == "python":
        found = list(_PythonImports(path, root, cache).definitions(text[:MAX_SCAN_CHARS]))
    elif kind == "script":
        found = list(_ScriptImports(path, root, cache).definitions(text[:MAX_SCAN_CHARS]))
    else:
        return []
    try:
        own = path.resolve()
    except (OSError, RuntimeError):
        own = path
    return [item for item in found if item.file != own]


def _kind(path: Path, language: str | None) -> str | None:
    if language in _PYTHON_LANGUAGES or (language is None and path.suffix in PYTHON_SUFFIXES):
        return "python"
    if language in _SCRIPT_LANGUAGES or (language is None and path.suffix in _DIALECTS):
        return "script"
    return None


# -- Python --------------------------------------------------------------------------------
def python_import_statements(text: str) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a Python source, found line by line (the source need not
    parse as a whole), each parsed on its own; in the order they appear."""
    statements: list[ast.Import | ast.ImportFrom] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not _PYTHON_IMPORT_START.match(line):
            continue
        statement = line.strip()
        open_parens = statement.count("(") - statement.count(")")
        while (open_parens > 0 or statement.endswith("\\")) and index < len(lines):
            following = lines[index]
            index += 1
            statement += "\n" + following
            open_parens += following.count("(") - following.count(")")
        try:
            parsed = ast.parse(statement)
        except (SyntaxError, ValueError):
            try:  # ``import os; x = (`` typed on: the import still counts
                parsed = ast.parse(statement.split(";", 1)[0])
            except (SyntaxError, ValueError):
                continue
        statements += [n for n in parsed.body if isinstance(n, ast.Import | ast.ImportFrom)]
    return statements


# ``import a.b``, ``from a.b import c`` and relative imports, resolved as Python finds them:
# relative to the document's package, or absolute against the workspace root, its src/ directory,
# the directory above the document's top package and the document's own directory. A name a package
# re-exports (``from .core import Thing`` in ``__init__.py``) is followed to its definition.
class _PythonImports:
    def __init__(self, path: Path, root: Path, cache: OutlineCache) -> None:
        self.path = path
        self.root = root
        self.cache = cache
        self.search = _python_search_roots(path, root)

    def definitions(self, text: str) -> Iterator[Imported]:
        for position, statement in enumerate(python_import_statements(text)):
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    file = self.module_file(alias.name, 0, self.path)
                    if file is not None:
                        yield from self.module(file, alias.asname or alias.name, position)
                continue
            module = statement.module or ""
            for alias in statement.names:
                local = alias.asname or alias.name
                if alias.name == "*":
                    file = self.module_file(module, statement.level, self.path)
                    if file is not None:
                        yield from self.module(file, module or ".", position)
                    continue
                found = self.name(module, statement.level, self.path, alias.name, 0)
                if found is not None:
                    file, definition = found
                    yield Imported(
                        file, alias.name, local, definition.text, definition.line, position
                    )
                    continue
                # Not a name the module defines: a submodule (``from pkg import mod``).
                sub = f"{module}.{alias.name}" if module else alias.name
                file = self.module_file(sub, statement.level, self.path)
                if file is not None:
                    yield from self.module(file, local, position)

    def module(self, file: Path, alias: str, position: int) -> Iterator[Imported]:
        outline = self.outline(file)
        if outline is not None:
            summary = outline.summary()
            if summary.strip():
                yield Imported(file, None, alias, summary, 0, position)

    def outline(self, file: Path) -> PythonOutline | None:
        return self.cache.get(file, "python", outline_python)

    def name(
        self, module: str, level: int, importer: Path, name: str, depth: int
    ) -> tuple[Path, Definition] | None:
        """Where ``name`` of ``module`` (imported from ``importer``) is defined, following
        re-exports."""
        file = self.module_file(module, level, importer)
        if file is None:
            return None
        outline = self.outline(file)
        if outline is None:
            return None
        definition = outline.definitions.get(name)
        if definition is not None:
            return file, definition
        reexport = outline.reexports.get(name)
        if reexport is None or reexport.name is None or depth >= MAX_REEXPORT_DEPTH:
            return None
        return self.name(reexport.module, reexport.level, file, reexport.name, depth + 1)

    def module_file(self, module: str, level: int, importer: Path) -> Path | None:
        """The file of ``module`` as imported from ``importer`` (``level`` leading dots)."""
        parts = [p for p in module.split(".") if p]
        if level > 0:
            base = importer.parent
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            if not parts:
                return None
            bases = self.search
        for base in bases:
            target = base.joinpath(*parts)
            for candidate in (
                *(target.with_name(target.name + s) for s in PYTHON_SUFFIXES if parts),
                target / "__init__.py",
                target / "__init__.pyi",
            ):
                file = inside(self.root, candidate)
                if file is not None:
                    return file
        return None


def _python_search_roots(path: Path, root: Path) -> list[Path]:
    """Where absolute imports are looked for: the root, its ``src/``, the directory above the
    document's top package, and the document's own directory."""
    roots = [root, root / "src"]
    top = path.parent
    while (top / "__init__.py").is_file() and top != root and top.parent != top:
        top = top.parent
    roots += [top, path.parent]
    unique: list[Path] = []
    for candidate in roots:
        if candidate.is_dir() and candidate not in unique:
            unique.append(candidate)
    return unique


# -- TypeScript and JavaScript ---------------------------------------------------------------
# Relative specifiers (``./x``, ``../y``) with the extensions of SCRIPT_SUFFIXES and ``index``
# files, and the paths/baseUrl of the nearest tsconfig.json or jsconfig.json; bare package names
# (node_modules) are not the workspace's and are skipped.
class _ScriptImports:
    def __init__(self, path: Path, root: Path, cache: OutlineCache) -> None:
        self.path = path
        self.root = root
        self.cache = cache
        self.config = _ts_config(path, root)

    def definitions(self, text: str) -> Iterator[Imported]:
        dialect = _DIALECTS.get(self.path.suffix, "tsx")
        own = outline_script(text, dialect)
        for imp in own.imports:
            yield from self.imported(imp)

    def imported(self, imp: ScriptImport) -> Iterator[Imported]:
        file = self.resolve(imp.specifier, self.path)
        if file is None:
            return
        outline = self.outline(file)
        if outline is None:
            return
        for local, exported in imp.names.items():
            found = self.export(file, outline, exported, 0)
            if found is not None:
                where, definition = found
                yield Imported(
                    where, exported, local, definition.text, definition.line, imp.position
                )
        if imp.namespace is not None:
            summary = outline.summary()
            if summary.strip():
                yield Imported(file, None, imp.namespace, summary, 0, imp.position)

    def outline(self, file: Path) -> ScriptOutline | None:
        dialect = _DIALECTS.get(file.suffix, "typescript")
        return self.cache.get(file, dialect, lambda text: outline_script(text, dialect))

    def export(
        self, file: Path, outline: ScriptOutline, name: str, depth: int
    ) -> tuple[Path, Definition] | None:
        definition = outline.exports.get(name)
        if definition is None and not outline.exports:
            # CommonJS: the module's own top-level declarations stand for its exports.
            definition = next((d for d in outline.top_level if d.name == name), None)
        if definition is not None:
            return file, definition
        if depth >= MAX_REEXPORT_DEPTH:
            return None
        for specifier, names in outline.reexports:
            if names is not None and name not in names:
                continue
            target = self.resolve(specifier, file)
            inner = self.outline(target) if target is not None else None
            if target is None or inner is None:
                continue
            found = self.export(target, inner, names[name] if names else name, depth + 1)
            if found is not None:
                return found
        return None

    def resolve(self, specifier: str, importer: Path) -> Path | None:
        """The workspace file ``specifier`` names when imported from ``importer``."""
        if specifier.startswith(("./", "../")) or specifier in (".", ".."):
            return self.candidates(importer.parent / specifier)
        for base in self.config.targets(specifier):
            found = self.candidates(base)
            if found is not None:
                return found
        return None

    def candidates(self, base: Path) -> Path | None:
        name = base.name
        tries: list[Path] = []
        for suffix, sources in _COMPILED_FROM.items():
            if name.endswith(suffix):
                stem = base.with_name(name[: -len(suffix)])
                tries += [stem.with_name(stem.name + s) for s in sources]
        if any(name.endswith(s) for s in SCRIPT_SUFFIXES):
            tries.append(base)
        tries += [base.with_name(name + s) for s in SCRIPT_SUFFIXES]
        tries += [base / f"index{s}" for s in SCRIPT_SUFFIXES]
        for candidate in tries:
            file = inside(self.root, candidate)
            if file is not None:
                return file
        return None


@dataclass(frozen=True)
class _TsConfig:
    base: Path | None  # baseUrl, resolved
    paths: dict[str, list[str]]
    directory: Path

    def targets(self, specifier: str) -> list[Path]:
        """Where ``paths`` (and then ``baseUrl``) map a non-relative specifier."""
        found: list[Path] = []
        anchor = self.base or self.directory
        for pattern, replacements in self.paths.items():
            if "*" in pattern:
                head, _, tail = pattern.partition("*")
                if specifier.startswith(head) and specifier.endswith(tail):
                    star = specifier[len(head) : len(specifier) - len(tail)]
                    found += [anchor / r.replace("*", star) for r in replacements]
            elif specifier == pattern:
                found += [anchor / r for r in replacements]
        if self.base is not None:
            found.append(self.base / specifier)
        return found


_NO_CONFIG = _TsConfig(None, {}, Path("."))
_JSONC = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*[\s\S]*?\*/')
_TRAILING_COMMA = re.compile(r'("(?:\\.|[^"\\])*")|,(\s*[}\]])')


def read_jsonc(text: str) -> Any:
    """JSON with comments and trailing commas, as ``tsconfig.json`` allows."""
    text = _JSONC.sub(lambda m: m.group(1) or "", text)
    text = _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), text)
    return json.loads(text)


def _ts_config(path: Path, root: Path) -> _TsConfig:
    """``baseUrl`` and ``paths`` of the nearest tsconfig.json or jsconfig.json at or above the
    document, up to the root (``extends`` is not followed)."""
    directory = path.parent
    while True:
        for name in ("tsconfig.json", "jsconfig.json"):
            config = directory / name
            if config.is_file() and inside(root, config) is not None:
                text = _read(config)
                try:
                    data = read_jsonc(text) if text is not None else None
                except ValueError:
                    data = None
                options = data.get("compilerOptions") if isinstance(data, dict) else None
                if isinstance(options, dict):
                    return _config_of(options, directory)
                return _NO_CONFIG
        if directory == root or directory.parent == directory or root not in directory.parents:
            return _NO_CONFIG
        directory = directory.parent


def _config_of(options: dict[str, Any], directory: Path) -> _TsConfig:
    base_url = options.get("baseUrl")
    base = Path(os.path.normpath(directory / base_url)) if isinstance(base_url, str) else None
    raw = options.get("paths")
    paths: dict[str, list[str]] = {}
    if isinstance(raw, dict):
        for pattern, targets in raw.items():
            if isinstance(pattern, str) and isinstance(targets, list):
                paths[pattern] = [t for t in targets if isinstance(t, str)]
    return _TsConfig(base, paths, directory)
