"""Context from the rest of the workspace for a completion: imports and recent edits."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

from daemon.protocol import MAX_CONTEXT_SNIPPETS, MAX_SNIPPET_CHARS, ContextSnippet
from daemon.workspace.imports import OUTLINES, Imported, OutlineCache, imported_definitions
from daemon.workspace.recent import RecentChunk, RecentEdits

log = logging.getLogger(__name__)

# Characters of context sent at most: several times what the daemon's default budget places,
# so that it can choose, and far below the request size limit.
MAX_CONTEXT_CHARS = 12_000
# The text around the cursor the model sees anyway: lines before and after it.
WINDOW_BEFORE = 120
WINDOW_AFTER = 30
# A snippet whose token set is this similar to a chosen one's (Jaccard) is a near-duplicate;
# one whose lines are this much inside the text around the cursor is already seen.
DUPLICATE_SIMILARITY = 0.9
SEEN_SHARE = 0.9
# Lines shorter than this ("}", "...", "pass") say nothing about where a snippet came from.
_MEANINGFUL_LINE = 4
_TOKEN = re.compile(r"[A-Za-z_$][\w$]*|\d+|\S")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_IMPORT_LINE = re.compile(r"\s*(?:from\s|import\b|export\s.*\sfrom\s|.*\brequire\s*\()")


# Most useful first, the order in which the daemon fills its context budget: imported names the
# text around the cursor uses (nearest use first), then recent edits in other files (newest first),
# then the other imports (in the order of the import statements). Left out: the document itself,
# snippets the model already sees (their lines are in the text around the cursor), and
# near-duplicates of a snippet already chosen (token sets more than 90% alike); the count and the
# characters in all are bounded.
def gather_context(
    path: Path,
    text: str,
    cursor_line: int,
    root: Path,
    recent: RecentEdits | Sequence[RecentChunk] | None = None,
    *,
    language: str | None = None,
    max_chars: int = MAX_CONTEXT_CHARS,
    max_snippets: int = MAX_CONTEXT_SNIPPETS,
    cache: OutlineCache = OUTLINES,
) -> list[ContextSnippet]:
    """Snippets of other files of the workspace ``root`` for a completion in the document
    ``path`` (content ``text``, cursor on the 0-based ``cursor_line``), most useful first."""
    window_start = max(0, cursor_line - WINDOW_BEFORE)
    window = text.split("\n", cursor_line + WINDOW_AFTER + 1)[
        window_start : cursor_line + WINDOW_AFTER + 1
    ]
    seen_lines = _meaningful_lines("\n".join(window))
    uses = _uses(window, window_start, cursor_line)

    imports = imported_definitions(path, text, root, language, cache)
    used: list[tuple[int, int, Imported]] = []
    unused: list[Imported] = []
    for item in imports:
        head = item.alias.split(".", 1)[0]
        if head in uses:
            used.append((uses[head], item.position, item))
        else:
            unused.append(item)
    used.sort(key=lambda entry: entry[:2])

    candidates = [_import_snippet(item, root) for _, _, item in used]
    candidates += _recent_snippets(path, root, recent)
    candidates += [_import_snippet(item, root) for item in unused]

    chosen: list[ContextSnippet] = []
    chosen_tokens: list[set[str]] = []
    total = 0
    for snippet in candidates:
        if len(chosen) >= max_snippets:
            break
        if not snippet.text.strip() or total + len(snippet.text) > max_chars:
            continue
        if _share_inside(_meaningful_lines(snippet.text), seen_lines) >= SEEN_SHARE:
            continue
        tokens = set(_TOKEN.findall(snippet.text))
        if any(jaccard(tokens, other) > DUPLICATE_SIMILARITY for other in chosen_tokens):
            continue
        chosen.append(snippet)
        chosen_tokens.append(tokens)
        total += len(snippet.text)
    return chosen


def display_path(file: Path, root: Path) -> str:
    """``file`` as the model is shown it: relative to the workspace root when inside it."""
    for base, target in ((root, file), (_resolved(root), _resolved(file))):
        try:
            return target.relative_to(base).as_posix()
        except ValueError:
            continue
    return file.name


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0 for two empty sets."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def _share_inside(lines: set[str], seen: set[str]) -> float:
    """The share of ``lines`` found in ``seen`` (0 when there are none)."""
    if not lines:
        return 0.0
    return len(lines & seen) / len(lines)


def _meaningful_lines(text: str) -> set[str]:
    return {s for line in text.split("\n") if len(s := line.strip()) >= _MEANINGFUL_LINE}


def _uses(window: list[str], first_line: int, cursor_line: int) -> dict[str, int]:
    """Identifiers used in ``window`` (whose first line is the document's ``first_line``)
    outside import statements, each with the distance in lines from the cursor to its
    nearest use."""
    uses: dict[str, int] = {}
    for offset, line in enumerate(window):
        if _IMPORT_LINE.match(line):
            continue
        distance = abs(first_line + offset - cursor_line)
        for name in _IDENTIFIER.findall(line):
            if distance < uses.get(name, distance + 1):
                uses[name] = distance
    return uses


def _import_snippet(item: Imported, root: Path) -> ContextSnippet:
    return ContextSnippet(
        path=display_path(item.file, root),
        text=_cut(item.text),
        kind="import",
        name=item.name,
        line=item.line,
    )


def _recent_snippets(
    path: Path, root: Path, recent: RecentEdits | Sequence[RecentChunk] | None
) -> list[ContextSnippet]:
    if recent is None:
        return []
    chunks = recent.chunks() if isinstance(recent, RecentEdits) else list(recent)
    own = _resolved(path)
    return [
        ContextSnippet(
            path=display_path(chunk.path, root),
            text=_cut(chunk.text),
            kind="recent",
            line=chunk.first_line,
        )
        for chunk in chunks
        if _resolved(chunk.path) != own
    ]


def _cut(text: str, limit: int = MAX_SNIPPET_CHARS) -> str:
    """``text`` within ``limit`` characters, cut at a line's end."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut[: cut.rfind("\n") + 1] if "\n" in cut else cut


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path
