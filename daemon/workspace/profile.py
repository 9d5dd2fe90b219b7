"""The workspace profile: language, versions, frameworks, style and tools of the code at hand.
Computed where the files are and sent with every request, so the model never has to guess.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from daemon.language import detect_language, language_info
from daemon.protocol import WorkspaceProfile
from daemon.workspace.manifests import ECOSYSTEMS, MANIFEST_FILES, read_manifests, read_text
from daemon.workspace.style import (
    STYLE_FILES,
    TOOL_FILES,
    complete_style,
    detect_tools,
    resolve_style,
)

log = logging.getLogger(__name__)

MANIFEST_NAMES: frozenset[str] = frozenset(
    {name for names in MANIFEST_FILES.values() for name in names}
    | set(STYLE_FILES)
    | set(TOOL_FILES)
)
# Files that mark a project's top when there is no version control.
_PROJECT_FILES = frozenset(
    {
        *("pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "requirements.txt"),
        *("package.json", "go.mod", "go.work", "Cargo.toml", "pom.xml", "CMakeLists.txt"),
        *("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"),
    }
)
_VCS_DIRS = (".git", ".hg", ".svn")
MAX_DOCUMENT_BYTES = 1 << 20
DEBOUNCE_S = 0.1
MAX_CACHED = 256


def is_manifest_name(name: str) -> bool:
    """Whether a change to a file of this name can change a profile."""
    return (
        name in MANIFEST_NAMES
        or (name.startswith("requirements") and name.endswith(".txt"))
        or (name.startswith("tsconfig") and name.endswith(".json"))
        or name.startswith(".prettierrc")
    )


def _absolute(path: Path) -> Path:
    # abspath, not resolve: a symlinked workspace keeps the paths the user sees.
    return Path(os.path.abspath(path))


def find_workspace_root(file: Path) -> Path:
    """The nearest ancestor under version control; else the nearest with a project manifest;
    else the file's own directory."""
    path = _absolute(file)
    start = path if path.is_dir() else path.parent
    chain = [start, *start.parents]
    for directory in chain:
        if any((directory / vcs).exists() for vcs in _VCS_DIRS):
            return directory
    for directory in chain:
        if any((directory / name).is_file() for name in _PROJECT_FILES):
            return directory
    return start


def _inside(root: Path, file: Path) -> Path:
    """``file`` as a path under ``root`` when it is there through a symlink on either side."""
    if root in file.parents:
        return file
    try:
        return root / file.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return file


def _search_dirs(root: Path, file: Path | None) -> list[Path]:
    """Directories to look for manifests in: the file's directory up to the root, nearest first."""
    if file is None:
        return [root]
    start = file.parent
    if start != root and root not in start.parents:
        return [start]  # outside the workspace: only what sits beside the file
    chain = [start]
    while chain[-1] != root:
        chain.append(chain[-1].parent)
    return chain


def _read_document(file: Path | None) -> str | None:
    if file is None or not file.is_file():
        return None
    return read_text(file, MAX_DOCUMENT_BYTES)


def _base_profile(
    root: Path, dirs: list[Path], file: Path | None, language: str | None
) -> WorkspaceProfile:
    """Everything the workspace's files say; the document's own indentation comes later."""
    info = language_info(language)
    if info is None:
        ecosystems: tuple[str, ...] = ECOSYSTEMS  # unknown language: tell all we know
    else:
        ecosystems = (info.ecosystem,) if info.ecosystem else ()
    manifests = read_manifests(ecosystems, dirs, root)
    style, style_files = resolve_style(dirs, file, language)
    tools, tool_files = detect_tools(dirs, language)
    sources = list(manifests.sources)
    for path in style_files + tool_files:
        try:
            relative = path.relative_to(root).as_posix()
        except ValueError:
            relative = path.as_posix()
        if relative not in sources:
            sources.append(relative)
    versions = dict(list(manifests.versions.items())[:32])
    return WorkspaceProfile(
        language=language[:200] if language else None,
        versions=versions,
        frameworks=manifests.frameworks[:64],
        style=style,
        tools=tools[:16],
        sources=[s for s in sources if len(s) <= 1024][:64],
    )


def _with_document(profile: WorkspaceProfile, text: str | None) -> WorkspaceProfile:
    style = complete_style(profile.style, text)
    return profile if style == profile.style else profile.model_copy(update={"style": style})


def compute_profile(
    root: Path, file: Path | None, text: str | None = None, language_id: str | None = None
) -> WorkspaceProfile:
    """The profile of ``file`` (or of the workspace when None), reading ``file`` if no text.
    Computed where the files are (the CLI and the language server), so that the prompt can
    state it."""
    root = _absolute(root)
    path = _inside(root, _absolute(file)) if file is not None else None
    if text is None:
        text = _read_document(path)
    language = detect_language(str(path) if path else None, text, language_id)
    base = _base_profile(root, _search_dirs(root, path), path, language)
    return _with_document(base, text)


@dataclass
class _Entry:
    file: Path | None
    language: str | None
    dirs: list[Path]
    profile: WorkspaceProfile
    stale: bool = False
    # The directories as the file system reports them (symlinks resolved), to match events.
    watch_keys: frozenset[Path] = frozenset()


class _ManifestEvents(FileSystemEventHandler):
    """Passes on the directory of every change to a manifest-named file."""

    def __init__(self, callback: Callable[[Path], None]) -> None:
        self._callback = callback

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = os.fsdecode(raw) if raw else ""
            if path and is_manifest_name(os.path.basename(path)):
                self._callback(Path(os.path.dirname(path)))


class WorkspaceProfiler:
    """Profiles for one workspace root, cached per (directory, language) and kept fresh.

    Each directory a profile was computed from is watched (non-recursively), so a manifest
    edited, created or deleted there refreshes the profiles that depend on it about
    ``DEBOUNCE_S`` later; until then ``profile_for`` recomputes rather than answer stale.
    """

    def __init__(self, root: Path) -> None:
        self.root = _absolute(root)
        self._lock = threading.RLock()
        self._entries: OrderedDict[tuple[Path, str | None], _Entry] = OrderedDict()
        self._watched: dict[Path, Any] = {}  # directory -> watchdog watch (None until started)
        self._observer: Any = None
        self._handler = _ManifestEvents(self._manifest_changed)
        self._generation = 0
        self._listeners: list[Callable[[], None]] = []
        self._pending: set[tuple[Path, str | None]] = set()
        self._timer: threading.Timer | None = None

    @property
    def generation(self) -> int:
        return self._generation

    def add_listener(self, callback: Callable[[], None]) -> None:
        with self._lock:
            self._listeners.append(callback)

    def profile_for(
        self, file: Path | None, text: str | None = None, language_id: str | None = None
    ) -> WorkspaceProfile:
        path = _inside(self.root, _absolute(file)) if file is not None else None
        if text is None:
            text = _read_document(path)
        language = detect_language(str(path) if path else None, text, language_id)
        dirs = _search_dirs(self.root, path)
        key = (dirs[0], language)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and not entry.stale:
                self._entries.move_to_end(key)
            else:
                entry = None
        if entry is None:
            entry = self._compute(key, path, language, dirs)
        return _with_document(entry.profile, text)

    def _compute(
        self,
        key: tuple[Path, str | None],
        file: Path | None,
        language: str | None,
        dirs: list[Path],
    ) -> _Entry:
        with self._lock:
            generation = self._generation
        profile = _base_profile(self.root, dirs, file, language)
        with self._lock:
            # A manifest that changed while we read must not be forgotten: stay stale.
            entry = _Entry(
                file,
                language,
                dirs,
                profile,
                stale=generation != self._generation,
                watch_keys=frozenset(d.resolve() for d in dirs),
            )
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > MAX_CACHED:
                _, evicted = self._entries.popitem(last=False)
                self._unwatch_unused(evicted.dirs)
            for directory in dirs:
                if directory not in self._watched:
                    self._watched[directory] = None
                    self._schedule(directory)
        return entry

    def _schedule(self, directory: Path) -> None:
        if self._observer is None:
            return
        try:
            self._watched[directory] = self._observer.schedule(
                self._handler, str(directory), recursive=False
            )
        except OSError as exc:  # gone, or out of inotify watches: profiles still work, unwatched
            log.debug("cannot watch %s: %s", directory, exc)

    def _unwatch_unused(self, dirs: list[Path]) -> None:
        # Each watch costs an inotify watch and a thread: keep only those a cached profile needs.
        needed = {d for entry in self._entries.values() for d in entry.dirs}
        for directory in dirs:
            if directory in needed or directory == self.root or directory not in self._watched:
                continue
            watch = self._watched.pop(directory)
            if watch is not None and self._observer is not None:
                try:
                    self._observer.unschedule(watch)
                except (KeyError, OSError) as exc:
                    log.debug("cannot unwatch %s: %s", directory, exc)

    def start(self) -> None:
        with self._lock:
            if self._observer is not None:
                return
            observer = Observer()
            observer.daemon = True
            self._observer = observer
            self._watched.setdefault(self.root, None)
            for directory in list(self._watched):
                self._schedule(directory)
            observer.start()

    def stop(self) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
            timer, self._timer = self._timer, None
            self._watched = dict.fromkeys(self._watched)
        if timer is not None:
            timer.cancel()
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)

    def _manifest_changed(self, directory: Path) -> None:
        resolved = directory.resolve()
        with self._lock:
            self._generation += 1
            for key, entry in self._entries.items():
                if resolved in entry.watch_keys:
                    entry.stale = True
                    self._pending.add(key)
            if self._timer is not None:
                self._timer.cancel()
            # Package managers rewrite a lockfile in bursts: refresh once they are done.
            self._timer = threading.Timer(DEBOUNCE_S, self._refresh)
            self._timer.daemon = True
            self._timer.start()

    def _refresh(self) -> None:
        with self._lock:
            keys, self._pending = self._pending, set()
            self._timer = None
            work = [(key, self._entries[key]) for key in keys if key in self._entries]
        for key, entry in work:
            try:
                self._compute(key, entry.file, entry.language, entry.dirs)
            except Exception:
                log.exception("refreshing the workspace profile failed")
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("workspace profile listener failed")
