"""Other files in the prompt: snippets chosen whole within a budget, placed before the document."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from daemon.language import language_info
from daemon.protocol import ContextSnippet
from models.families import PromptFormat, Repository, Vocabulary

# A token rarely covers more characters than this: a snippet longer than the budget times this
# cannot fit, and is skipped without being tokenized.
CHARS_PER_TOKEN_CEILING = 8
# What the repository layout is called when the client does not name the workspace.
DEFAULT_REPOSITORY = "workspace"
_KIND_RANK = {"import": 0, "recent": 1}


@dataclass(frozen=True)
class PromptContext:
    """What a completion request brings from the rest of the workspace, and the room for it."""

    snippets: Sequence[ContextSnippet]
    budget: int  # tokens at most (0: none)
    language: str | None = None  # the document's language, for comment blocks
    path: str | None = None  # the document's path, for the repository layout
    repository: str | None = None  # the workspace's name, for the repository layout


@dataclass(frozen=True)
class PlacedContext:
    """The snippets that fit, laid out: as a repository (formats with a repository layout) or
    as ``text``, comment blocks to put before the document (the others)."""

    snippets: tuple[ContextSnippet, ...] = ()
    repository: Repository | None = None
    text: str = ""
    tokens: int = 0
    dropped: int = 0  # snippets that did not fit, or had nowhere to go
    files: tuple[tuple[str, str], ...] = field(default=())

    @property
    def key(self) -> str:
        """Everything about the placed context an answer depends on, as one string."""
        if not self.snippets:
            return ""
        if self.repository is not None:
            parts = [self.repository.name, self.repository.path]
            parts += [f"{path}\x1f{content}" for path, content in self.repository.files]
            return "\x1e".join(parts)
        return self.text


NO_CONTEXT = PlacedContext()


def layout_files(snippets: Sequence[ContextSnippet]) -> list[tuple[str, str]]:
    """The snippets as (path, content) files in the stable layout order: one file per path,
    files by their first snippet's kind and by path, snippets by kind and line."""
    by_path: dict[str, list[ContextSnippet]] = {}
    for snippet in snippets:
        by_path.setdefault(snippet.path, []).append(snippet)

    def order(snippet: ContextSnippet) -> tuple[int, int]:
        return _KIND_RANK.get(snippet.kind, len(_KIND_RANK)), snippet.line or 0

    files: list[tuple[tuple[int, str], str, str]] = []
    for path, group in by_path.items():
        group = sorted(group, key=order)  # stable: ties keep the request's order
        texts: list[str] = []
        for snippet in group:
            text = snippet.text.strip("\n")
            if text.strip() and text not in texts:
                texts.append(text)
        if texts:
            files.append(((order(group[0])[0], path), path, "\n\n".join(texts) + "\n"))
    files.sort(key=lambda item: item[0])
    return [(path, content) for _, path, content in files]


def comment_block(path: str, content: str, language: str | None) -> str | None:
    """One file as a comment block in ``language``: its path, then its lines, commented; None
    when the language has no comment syntax (or the content would close the comment)."""
    info = language_info(language)
    if info is None:
        return None
    lines = content.rstrip("\n").split("\n")
    if info.line_comment:
        mark = info.line_comment
        body = "".join(f"{mark} {line}\n" if line.strip() else f"{mark}\n" for line in lines)
        return f"{mark} Path: {path}\n{body}"
    if info.block_comment:
        start, end = info.block_comment
        if end in content or end in path:
            return None
        return f"{start} Path: {path}\n" + "".join(f"{line}\n" for line in lines) + f"{end}\n"
    return None


# Families trained on whole repositories (Qwen2.5-Coder, StarCoder2) get the snippets as files of a
# repository, in the family's own markers (single special tokens; the source text is tokenized as
# plain text); every other format gets them as comment blocks in the document's language (``# Path:
# lib/util.py`` and the snippet's lines, commented), and a language with no comment syntax gets
# none. Which snippets go in is decided in the request's order (the client sends the most useful
# first): a snippet goes in whole while it fits, or not at all. Where they go is a stable order,
# not the request's (files by kind, imports before recent edits, then path; snippets by kind and
# line), so a newer edit elsewhere does not move the others and the KV prefix survives.
def place_context(
    fmt: PromptFormat,
    vocab: Vocabulary,
    context: PromptContext,
    budget: int,
    count: Callable[[str], int],
) -> PlacedContext:
    """The snippets of ``context`` that fit ``budget`` tokens, whole, chosen in the request's
    order and laid out in the stable order, in the repository layout where ``fmt`` has one."""
    snippets = list(context.snippets)
    if not snippets or budget <= 0:
        return PlacedContext(dropped=len(snippets))
    if fmt.repository_layout(vocab):
        return _place(snippets, budget, _RepositoryLayout(fmt, vocab, context, count))
    if language_info(context.language) is None:
        return PlacedContext(dropped=len(snippets))
    return _place(snippets, budget, _CommentLayout(context.language, count))


class _RepositoryLayout:
    def __init__(
        self,
        fmt: PromptFormat,
        vocab: Vocabulary,
        context: PromptContext,
        count: Callable[[str], int],
    ) -> None:
        self.fmt = fmt
        self.vocab = vocab
        self.name = (context.repository or "").strip() or DEFAULT_REPOSITORY
        self.path = context.path or ""
        self.count = count

    def cost(self, snippet: ContextSnippet) -> int | None:
        """Tokens the snippet costs as a file of its own (one separator token)."""
        return 1 + self.count(f"{snippet.path}\n{snippet.text.strip(chr(10))}\n\n")

    def overhead(self) -> int:
        return len(self.fmt.repository_head(self.vocab, Repository(self.name, (), self.path)))

    def lay_out(self, chosen: list[ContextSnippet]) -> PlacedContext:
        files = tuple(layout_files(chosen))
        repository = Repository(self.name, files, self.path)
        tokens = len(self.fmt.repository_head(self.vocab, repository))
        return PlacedContext(tuple(chosen), repository, "", tokens, 0, files)


class _CommentLayout:
    def __init__(self, language: str | None, count: Callable[[str], int]) -> None:
        self.language = language
        self.count = count

    def cost(self, snippet: ContextSnippet) -> int | None:
        block = comment_block(snippet.path, snippet.text, self.language)
        return None if block is None else self.count(block + "\n")

    def overhead(self) -> int:
        return 0

    def lay_out(self, chosen: list[ContextSnippet]) -> PlacedContext:
        blocks: list[str] = []
        files: list[tuple[str, str]] = []
        for path, content in layout_files(chosen):
            block = comment_block(path, content, self.language)
            if block is not None:
                blocks.append(block + "\n")
                files.append((path, content))
        kept = {path for path, _ in files}
        placed = [s for s in chosen if s.path in kept]
        text = "".join(blocks)
        return PlacedContext(tuple(placed), None, text, self.count(text), 0, tuple(files))


def _place(
    snippets: list[ContextSnippet],
    budget: int,
    layout: _RepositoryLayout | _CommentLayout,
) -> PlacedContext:
    """Choose whole snippets in order while their estimated costs fit, then check the exact
    cost of the layout and drop the last chosen until it fits."""
    used = layout.overhead()
    chosen: list[ContextSnippet] = []
    for snippet in snippets:
        if len(snippet.text) > budget * CHARS_PER_TOKEN_CEILING:
            continue
        cost = layout.cost(snippet)
        if cost is None or used + cost > budget:
            continue
        chosen.append(snippet)
        used += cost
    while chosen:
        placed = layout.lay_out(chosen)
        if placed.tokens <= budget:
            return replace(placed, dropped=len(snippets) - len(placed.snippets))
        chosen.pop()  # the lowest in the request's order goes first
    return PlacedContext(dropped=len(snippets))
