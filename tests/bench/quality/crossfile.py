"""A cross-file completion set from real multi-file Python code installed on this machine.

From a package in the virtual environment, take the lines inside function bodies that call a
function or class the module imports from a sibling module (``from .utils import echo``). The
cursor goes right after ``name(``, where the programmer needs to know the callee's signature,
which is in another file; the expected completion is the rest of the line as its author wrote
it. The document is the module as it is, minus the rest of that line. ``fits_signature`` is
the proxy reported beside the exact line: the call the answer finishes binds to the callee.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from dataclasses import dataclass
from pathlib import Path

from tests.bench.quality.tasks import Cursor

MIN_REST, MAX_REST = 3, 80


@dataclass(frozen=True)
class CrossFileLine(Cursor):
    path: Path  # the module the line is in
    root: Path  # the directory the package's imports resolve against
    name: str  # the imported name the line calls
    before: str
    after: str
    expected: str


def package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{package} is not an installed package")
    return Path(next(iter(spec.submodule_search_locations)))


def _defined_names(module: Path) -> set[str]:
    try:
        tree = ast.parse(module.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return set()
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _sibling_imports(module: Path, tree: ast.Module, package: Path) -> set[str]:
    """Names this module imports from sibling modules that define them."""
    names: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or node.level != 1 or not node.module:
            continue
        source = package / (node.module.replace(".", "/") + ".py")
        if source == module or not source.is_file():
            continue
        defined = _defined_names(source)
        names |= {
            alias.name for alias in node.names if alias.asname is None and alias.name in defined
        }
    return names


def _lines_in(module: Path, package: Path) -> list[CrossFileLine]:
    text = module.read_text(encoding="utf-8")
    tree = ast.parse(text)
    imported = _sibling_imports(module, tree, package)
    if not imported:
        return []
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    found: list[CrossFileLine] = []
    seen: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)):
                continue
            name = inner.func.id
            row = inner.lineno - 1
            if name not in imported or row in seen or inner.end_lineno != inner.lineno:
                continue
            source = lines[row]
            column = source.find(name + "(", inner.func.col_offset) + len(name) + 1
            rest = source[column:].rstrip()
            if not (MIN_REST <= len(rest) <= MAX_REST) or "#" in rest:
                continue
            if source.rstrip().endswith(("(", "[", "{", ",", "\\")):
                continue  # the statement goes on to the next line
            seen.add(row)
            cut = offsets[row] + column
            end = offsets[row] + len(source)
            found.append(CrossFileLine(module, package.parent, name, text[:cut], text[end:], rest))
    return sorted(found, key=lambda item: item.line)


def cross_file_lines(packages: list[str], count: int) -> list[CrossFileLine]:
    """Up to ``count`` lines, spread over the packages' modules (the same set every run)."""
    pools: list[list[CrossFileLine]] = []
    for package in packages:
        directory = package_dir(package)
        for module in sorted(directory.glob("*.py")):
            try:
                lines = _lines_in(module, directory)
            except (SyntaxError, UnicodeDecodeError):
                continue
            if lines:
                pools.append(lines)
    chosen: list[CrossFileLine] = []
    depth = 0
    # Round-robin over the modules, so no one module fills the set.
    while len(chosen) < count and any(depth < len(pool) for pool in pools):
        for pool in pools:
            if depth < len(pool) and len(chosen) < count:
                chosen.append(pool[depth])
        depth += 1
    return chosen


def fits_signature(line: CrossFileLine, answer: str) -> bool:
    """Whether the call the answer finishes binds to the callee's real signature (read with
    ``inspect`` from the installed package): a proxy beside the exact line, since a call that
    binds may still pass the wrong values. The answer is parsed, never run."""
    module = ".".join(line.path.relative_to(line.root).with_suffix("").parts)
    try:
        target = getattr(importlib.import_module(module), line.name)
        signature = inspect.signature(target)
    except (ImportError, AttributeError, TypeError, ValueError):
        return False
    source = f"{line.name}({answer}"
    call: ast.expr | None = None
    for index, char in enumerate(source):
        if char != ")":
            continue
        try:
            call = ast.parse(source[: index + 1], mode="eval").body
            break  # the first closing bracket that makes the call whole
        except SyntaxError:
            continue
    if not isinstance(call, ast.Call):
        return False  # the answer leaves the call open
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return True  # *args, **kwargs: not checkable, given the benefit of the doubt
    try:
        signature.bind(*call.args, **{k.arg: k.value for k in call.keywords if k.arg})
    except TypeError:
        return False
    return True
