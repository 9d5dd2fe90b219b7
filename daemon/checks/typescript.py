"""The TypeScript compiler on this machine, and the checkers that run it under node.
One script, ``typescript_syntax.js``, answers both the parser's verdict and undefined names.
"""

from __future__ import annotations

import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from daemon.checks.resident import ResidentChecker

_HERE = Path(__file__).resolve().parent


@functools.cache
def typescript_compiler() -> str | None:
    """The TypeScript compiler's ``typescript.js`` on this machine, or None: at
    ``$ASSIST_TYPESCRIPT`` (its ``typescript.js``, or its package folder), else among node's
    packages (``NODE_PATH``, then the global ones), else in a checkout of this project once its
    VS Code extension is built (``editors/vscode/node_modules``)."""
    places: list[Path] = []
    named = os.environ.get("ASSIST_TYPESCRIPT")
    if named:
        places += [Path(named), Path(named) / "lib/typescript.js"]
    node = shutil.which("node")
    if node is None:
        return None
    folders = [p for p in os.environ.get("NODE_PATH", "").split(os.pathsep) if p]
    folders.append(str(Path(node).resolve().parents[1] / "lib/node_modules"))
    folders.append(str(_HERE.parents[1] / "editors/vscode/node_modules"))
    places += [Path(folder) / "typescript/lib/typescript.js" for folder in folders]
    return next((str(p) for p in places if p.is_file()), None)


# One script, typescript_syntax.js, serves two checkers kept running (daemon.checks.resident):
# the parser's verdict on a text (daemon.checks.toolchain) and, in ``names`` mode, the type
# checker's undefined names in it (``script_undefined_names``, for misspelt names).
def typescript_command(kind: str, *mode: str) -> list[str] | None:
    """The command line of the checker for files of ``kind`` (ts, tsx, js, jsx) in ``mode``
    (none: syntax; ``names``: undefined names), or None without node and the compiler."""
    compiler = typescript_compiler()
    if compiler is None:
        return None
    return ["node", str(_HERE / "typescript_syntax.js"), compiler, kind, *mode]


# The type checker, kept running, by language: the kind of file it reads.
_NAMES_KINDS = {
    "javascript": "js",
    "javascriptreact": "jsx",
    "typescript": "ts",
    "typescriptreact": "tsx",
}
# The languages whose undefined names TypeScript's checker finds.
SCRIPT_LANGUAGES = frozenset(_NAMES_KINDS)
_NAMES: dict[str, ResidentChecker] = {
    language: ResidentChecker(
        f"TypeScript's checker ({kind})", functools.partial(typescript_command, kind, "names")
    )
    for language, kind in _NAMES_KINDS.items()
}


@dataclass(frozen=True)
class UndefinedName:
    """A name the TypeScript compiler cannot find, and the one it suggests, if any."""

    name: str
    line: int  # 0-based
    column: int  # 0-based code points
    suggestion: str | None


def script_undefined_names(language: str, text: str) -> list[UndefinedName] | None:
    """The names TypeScript's type checker finds undefined in a JavaScript or TypeScript
    text (the file alone: imports declare their names, the standard library's and the
    browser's globals are known); None without the compiler, or for another language."""
    resident = _NAMES.get(language)
    found = resident.ask(text) if resident is not None else None
    if found is None or not isinstance(found.get("names"), list):
        return None
    names = []
    for each in found["names"]:
        if not isinstance(each, dict) or not isinstance(each.get("name"), str):
            continue
        line, column = each.get("line"), each.get("column")
        if isinstance(line, int) and isinstance(column, int):
            suggestion = each.get("suggestion")
            meant = suggestion if isinstance(suggestion, str) else None
            names.append(UndefinedName(each["name"], line, column, meant))
    return names
