"""Workspace profiles for the documents the editor has open, kept fresh by watchdog.
One ``WorkspaceProfiler`` per workspace folder, or per project root of a file outside them.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from pygls.uris import to_fs_path

from daemon.protocol import WorkspaceProfile
from daemon.workspace.profile import WorkspaceProfiler, find_workspace_root


class ProfileService:
    def __init__(self) -> None:
        self._roots: list[Path] = []
        self._profilers: dict[Path, WorkspaceProfiler] = {}
        self._lock = threading.Lock()

    def set_folders(self, folders: list[Path]) -> None:
        self._roots = sorted({f.resolve() for f in folders}, key=lambda p: -len(p.parts))

    def root_for(self, path: Path) -> Path:
        for root in self._roots:
            if root == path or root in path.parents:
                return root
        return find_workspace_root(path)

    def _profiler(self, root: Path) -> WorkspaceProfiler:
        with self._lock:
            profiler = self._profilers.get(root)
            if profiler is None:
                profiler = WorkspaceProfiler(root)
                profiler.start()
                self._profilers[root] = profiler
            return profiler

    def display_path(self, uri: str) -> str | None:
        path = to_fs_path(uri)
        if path is None:
            return None
        file = Path(path)
        try:
            return file.relative_to(self.root_for(file)).as_posix()
        except ValueError:
            return file.name

    def _compute(self, uri: str, text: str, language_id: str | None) -> WorkspaceProfile | None:
        path = to_fs_path(uri)
        if path is None:  # untitled: the language is all there is
            return WorkspaceProfile(language=language_id) if language_id else None
        file = Path(path)
        return self._profiler(self.root_for(file)).profile_for(file, text, language_id)

    async def profile_for(
        self, uri: str, text: str, language_id: str | None
    ) -> WorkspaceProfile | None:
        """The document's profile, computed off the event loop: it reads manifests from disk."""
        return await asyncio.to_thread(self._compute, uri, text, language_id)

    def close(self) -> None:
        with self._lock:
            for profiler in self._profilers.values():
                profiler.stop()
            self._profilers.clear()
