"""Reading a workspace's files for the ecosystem readers: capped, never raising, noting sources.
Also what a reader hands back: the versions it found and the dependencies it listed.
"""

from __future__ import annotations

import json
import logging
import os
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.protocol import Framework
from daemon.workspace.manifests.formats import strip_json_comments

log = logging.getLogger(__name__)

MAX_MANIFEST_BYTES = 1 << 20
MAX_LOCK_BYTES = 16 << 20


@dataclass
class Dep:
    """A direct dependency: its name, the version or range asked for, and the file naming it."""

    name: str
    spec: str | None
    source: str


@dataclass
class Found:
    """What one ecosystem's reader found besides dependencies: versions by key."""

    versions: dict[str, str] = field(default_factory=dict)
    frameworks: list[Framework] = field(default_factory=list)

    def version(self, key: str, value: Any) -> None:
        """Set a version unless an earlier (higher-precedence) source set it."""
        if key in self.versions or value is None:
            return
        text = str(value).strip()
        if text:
            self.versions[key] = text[:200]


class Reader:
    """Finds and reads the files of one profile: capped, never raising, recording sources."""

    def __init__(self, dirs: Sequence[Path], root: Path) -> None:
        self.dirs = list(dirs)
        self.root = root
        self.sources: list[str] = []

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def nearest(self, *names: str) -> Path | None:
        """The nearest file with one of ``names`` (earlier names win within a directory)."""
        for directory in self.dirs:
            for name in names:
                candidate = directory / name
                if candidate.is_file():
                    return candidate
        return None

    def every(self, name: str) -> list[Path]:
        return [d / name for d in self.dirs if (d / name).is_file()]

    def nearest_matching(self, predicate: Callable[[str], bool]) -> list[Path]:
        """All matching files of the nearest directory that has any."""
        for directory in self.dirs:
            try:
                names = sorted(e.name for e in os.scandir(directory) if predicate(e.name))
            except OSError:
                continue
            files = [directory / n for n in names if (directory / n).is_file()]
            if files:
                return files
        return []

    def text(self, path: Path, limit: int = MAX_MANIFEST_BYTES) -> str | None:
        text = read_text(path, limit)
        if text is not None:
            self.note(path)
        return text

    def note(self, path: Path) -> None:
        rel = self.rel(path)
        if rel not in self.sources:
            self.sources.append(rel)

    def toml(self, path: Path, limit: int = MAX_MANIFEST_BYTES) -> dict[str, Any] | None:
        text = read_text(path, limit)
        if text is None:
            return None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            log.debug("skipping %s: %s", path, exc)
            return None
        self.note(path)
        return data

    def json(self, path: Path, limit: int = MAX_MANIFEST_BYTES, comments: bool = False) -> Any:
        text = read_text(path, limit)
        if text is None:
            return None
        try:
            data = json.loads(strip_json_comments(text) if comments else text)
        except (ValueError, RecursionError) as exc:
            log.debug("skipping %s: %s", path, exc)
            return None
        self.note(path)
        return data


def read_text(path: Path, limit: int = MAX_MANIFEST_BYTES) -> str | None:
    """A small text file's content, or None if it is missing, too big, binary or not UTF-8."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        log.debug("cannot read %s: %s", path, exc)
        return None
    if len(data) > limit:
        log.debug("skipping %s: larger than %d bytes", path, limit)
        return None
    if b"\x00" in data[:8192]:
        log.debug("skipping %s: binary", path)
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        log.debug("skipping %s: not UTF-8", path)
        return None
