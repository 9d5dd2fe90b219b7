"""The document a command works on: its workspace, the path shown, the cursor, the profile.
The profile is computed from the text the request carries, so the file is never read twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from daemon.cli.source_file import InputError
from daemon.protocol import WorkspaceProfile


@dataclass(frozen=True)
class Place:
    absolute: Path  # the file, resolved
    root: Path  # its workspace folder
    shown: str  # its path as the model is shown it: relative to the workspace when inside it


def locate(path: Path, workspace: Path | None) -> Place:
    """Where ``path`` sits: its workspace is ``workspace`` when given, else the one found."""
    from daemon.workspace.profile import find_workspace_root

    absolute = path.resolve()
    root = workspace.resolve() if workspace else find_workspace_root(absolute)
    try:
        shown = str(absolute.relative_to(root))
    except ValueError:
        shown = absolute.name
    return Place(absolute, root, shown)


def profile_of(place: Place, text: str, language: str | None) -> WorkspaceProfile:
    """The workspace profile for the file, its indentation inferred from ``text``."""
    from daemon.workspace.profile import compute_profile

    return compute_profile(place.root, place.absolute, text, language)


def check_position(text: str, line: int, column: int) -> tuple[int, int]:
    """Check a 1-based position against the text; return it 0-based."""
    if line < 1:
        raise InputError(f"--line {line} is outside the file: lines start at 1")
    count = text.count("\n") + 1
    if line > count:
        raise InputError(f"--line {line} is outside the file, which has {count} lines")
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    end = text.find("\n", start)
    current = text[start : end if end >= 0 else len(text)]
    length = len(current.rstrip("\r"))
    if column < 1 or column > length + 1:
        raise InputError(
            f"--column {column} is outside line {line}, which has {length} characters "
            f"(the column after the last character is {length + 1})"
        )
    return line - 1, column - 1
