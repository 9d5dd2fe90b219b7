"""The programmer's recent edits: a small ring of chunks of text around the places edited last.
The language server records each edit of an open document; a chunk replaces those it overlaps.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path

RECENT_CHUNKS = 16
RECENT_RADIUS = 10
# A chunk is cut to this many characters, keeping the lines nearest the edit.
MAX_CHUNK_CHARS = 2000
# Edits of larger documents (generated files) are not kept: finding the lines of each edit in
# them would cost more, on every keystroke, than their chunks are worth.
MAX_DOCUMENT_CHARS = 1 << 20


@dataclass(frozen=True)
class RecentChunk:
    path: Path
    first_line: int  # 0-based line of the document where ``text`` starts
    last_line: int  # 0-based line where it ends (inclusive)
    text: str


class RecentEdits:
    """A bounded ring of chunks around recent edits, newest first; safe to use from threads.

    Each edit recorded (its file and the lines it touched) keeps a chunk of ``radius`` lines
    either side of it, as the document was just after the edit. A chunk replaces the chunks of
    the same file it overlaps, so typing in one place keeps one chunk, fresh, and no line is
    kept twice. At most ``limit`` chunks are kept; a document's chunks go when it is closed."""

    def __init__(
        self,
        limit: int = RECENT_CHUNKS,
        radius: int = RECENT_RADIUS,
        max_chars: int = MAX_CHUNK_CHARS,
    ) -> None:
        self.limit = limit
        self.radius = radius
        self.max_chars = max_chars
        self._chunks: deque[RecentChunk] = deque()
        self._lock = threading.Lock()

    def record(self, path: Path, text: str, start_line: int, end_line: int | None = None) -> None:
        """An edit of ``path`` touched lines ``start_line``..``end_line`` (0-based, inclusive)
        of ``text``, the document as it is after the edit."""
        if len(text) > MAX_DOCUMENT_CHARS:
            return
        end_line = start_line if end_line is None else max(start_line, end_line)
        first = max(0, start_line - self.radius)
        last = end_line + self.radius
        lines = text.split("\n", last + 1)[first : last + 1]
        if not lines:
            return
        chunk_lines, offset = _fit(lines, start_line - first, self.max_chars)
        chunk = RecentChunk(
            path, first + offset, first + offset + len(chunk_lines) - 1, "\n".join(chunk_lines)
        )
        with self._lock:
            kept = [c for c in self._chunks if not _overlap(c, chunk)]
            self._chunks = deque([chunk, *kept][: self.limit])

    def forget(self, path: Path) -> None:
        """The document was closed: its chunks go."""
        with self._lock:
            self._chunks = deque(c for c in self._chunks if c.path != path)

    def chunks(self) -> list[RecentChunk]:
        """The chunks, newest first."""
        with self._lock:
            return list(self._chunks)

    def __len__(self) -> int:
        with self._lock:
            return len(self._chunks)


def _overlap(a: RecentChunk, b: RecentChunk) -> bool:
    return a.path == b.path and a.first_line <= b.last_line and b.first_line <= a.last_line


def _fit(lines: list[str], center: int, max_chars: int) -> tuple[list[str], int]:
    """The lines nearest ``center`` that fit ``max_chars``, and the offset of the first kept."""
    center = min(max(0, center), len(lines) - 1)
    if sum(len(line) + 1 for line in lines) <= max_chars:
        return lines, 0
    low = high = center
    used = len(lines[center]) + 1
    if used > max_chars:
        return [lines[center][:max_chars]], center
    while True:
        grew = False
        for step in (1, -1):
            index = high + 1 if step == 1 else low - 1
            if 0 <= index < len(lines) and used + len(lines[index]) + 1 <= max_chars:
                used += len(lines[index]) + 1
                if step == 1:
                    high = index
                else:
                    low = index
                grew = True
        if not grew:
            return lines[low : high + 1], low
