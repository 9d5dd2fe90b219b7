"""The workspace an operator named with ``--workspace``, for drop-in requests that bring none."""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePath

from daemon.protocol import CompleteRequest
from daemon.workspace.profile import WorkspaceProfiler


# llama.vim, llama.vscode and OpenAI's clients send no workspace profile, so their prompts would
# state the language and nothing else. The daemon keeps the profile of the one folder its operator
# named (never a path a request names) fresh with watchdog, and gives it to a request without a
# profile whose files (llama.vim's input_extra file names; an OpenAI request names none) lie in it.
class ServedWorkspace:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.profiler = WorkspaceProfiler(self.root)

    def start(self) -> None:
        self.profiler.start()

    def stop(self) -> None:
        self.profiler.stop()

    def holds(self, names: list[str]) -> bool:
        """Whether every file a request names lies in the workspace (a relative name is
        taken from its root; nothing is opened)."""
        for name in names:
            path = PurePath(name)
            if path.is_absolute() and not _under(path, self.root):
                return False
            if ".." in path.parts:
                return False
        return True

    async def profiled(self, req: CompleteRequest, names: list[str]) -> CompleteRequest:
        """``req`` with the workspace's profile, when it has none and its files lie in it."""
        if req.profile is not None or not self.holds(names):
            return req
        profile = await asyncio.to_thread(self.profiler.profile_for, None, req.text)
        return req.model_copy(
            update={"profile": profile, "repository": req.repository or self.root.name}
        )


def _under(path: PurePath, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True
