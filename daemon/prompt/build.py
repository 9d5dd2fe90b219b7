"""Build the model's prompt: other files and the profile header first, the cursor's window last."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from daemon.cursor import Cursor
from daemon.prompt.context import NO_CONTEXT, PlacedContext, PromptContext, place_context
from daemon.prompt.healing import healed_tail, heals_a_statement
from models.families import PromptFormat, Vocabulary

# The window's first and last lines move in steps of this many lines.
SNAP_LINES = 16
# A token rarely covers more than this many characters of code; used to pre-cut huge lines.
CHARS_PER_TOKEN_CEILING = 4
# Runs of more blank lines than this are collapsed to this many.
MAX_BLANK_RUN = 2
# Tokens the FIM markers and BOS may add around the text.
FORMAT_OVERHEAD = 8

_BLANK_RUN = re.compile(r"(?:[ \t]*\r?\n){" + str(MAX_BLANK_RUN + 2) + ",}")


@dataclass(frozen=True)
class BuiltPrompt:
    tokens: list[int]
    header: str
    prefix: str
    suffix: str
    format_name: str
    first_line: int  # first document line inside the window
    context: PlacedContext = NO_CONTEXT  # the other files placed before the document
    # The end of the text before the cursor that the prompt leaves out, for the model to write
    # whole as the start of its answer (token healing; "" when the prompt ends at the cursor).
    healed: str = ""
    # ``healed`` is the whole indentation of a line that begins a statement: the token that
    # writes its last blank must write code too (``heals_a_statement``).
    healed_to_code: bool = False


def collapse_blank_runs(text: str) -> str:
    """Keep at most MAX_BLANK_RUN blank lines in a row: they cost tokens and say nothing."""
    return _BLANK_RUN.sub("\n" * (MAX_BLANK_RUN + 1), text)


def _cut_prefix(prefix: str, budget: int, count: Callable[[str], int]) -> tuple[str, int]:
    """The end of ``prefix`` that fits ``budget`` tokens, starting on a snapped line."""
    lines = prefix.split("\n")
    last = lines[-1]
    if count(last) > budget:
        # One enormous line (minified code): keep its tail by characters.
        keep = max(1, budget * CHARS_PER_TOKEN_CEILING // 2)
        while keep > 1 and count(last[-keep:]) > budget:
            keep //= 2
        return last[-keep:], len(lines) - 1
    used = count(last)
    first = len(lines) - 1
    while first > 0:
        cost = count(lines[first - 1] + "\n")
        if used + cost > budget:
            break
        used += cost
        first -= 1
    if first > 0:
        # Move the start forward to the next multiple of SNAP_LINES so it stays put while typing.
        snapped = -(-first // SNAP_LINES) * SNAP_LINES
        first = min(snapped, len(lines) - 1)
    return "\n".join(lines[first:]), first


def _cut_suffix(suffix: str, budget: int, count: Callable[[str], int]) -> str:
    if budget <= 0 or not suffix:
        return ""
    lines = suffix.split("\n")
    used = 0
    end = 0
    while end < len(lines):
        cost = count(lines[end] + "\n")
        if used + cost > budget:
            break
        used += cost
        end += 1
    # Typing before the cursor does not change the text after it, so this cut is stable as is.
    return "\n".join(lines[:end])


# What stays the same from keystroke to keystroke comes first (other files, the header, then the
# top of the window), so the model's KV prefix survives typing. Other files take at most their own
# budget and never more than half of what the header leaves, so the window is never starved for
# them. The window is cut at line boundaries that move in steps of SNAP_LINES, and a file far
# larger than the context is cut, never refused.
def build_prompt(
    fmt: PromptFormat,
    vocab: Vocabulary,
    cursor: Cursor,
    *,
    budget: int,
    suffix_budget: int,
    header: str,
    context: PromptContext | None = None,
    heal: bool = False,
) -> BuiltPrompt:
    """Cut the document around the cursor to ``budget`` tokens and lay it out in ``fmt``, after
    the snippets of ``context`` that fit its budget (without them: the prompt as before). With
    ``heal``, the prompt ends before the last token of the cursor's line (``healed``)."""
    prefix, suffix = cursor.prefix, cursor.suffix
    prefix = collapse_blank_runs(prefix)
    suffix = collapse_blank_runs(suffix) if fmt.supports_fim else ""

    def count(piece: str) -> int:
        return len(vocab.tokenize_text(piece)) if piece else 0

    header_cost = count(header)
    if header_cost > budget // 4:
        header, header_cost = "", 0
    placed = NO_CONTEXT
    if context is not None and context.snippets and context.budget > 0:
        room = min(context.budget, max(0, budget - header_cost - FORMAT_OVERHEAD) // 2)
        placed = place_context(fmt, vocab, context, room, count)
    window = max(16, budget - header_cost - placed.tokens - FORMAT_OVERHEAD)
    suffix_share = min(suffix_budget, window // 4) if fmt.supports_fim else 0
    healed = ""
    for _ in range(4):
        cut_suffix = _cut_suffix(suffix, suffix_share, count)
        cut_prefix, _ = _cut_prefix(prefix, window - count(cut_suffix), count)
        if heal:
            healed = healed_tail(vocab, cut_prefix.rsplit("\n", 1)[-1])
            cut_prefix = cut_prefix[: len(cut_prefix) - len(healed)]
        tokens = fmt.build(
            vocab, placed.text + header + cut_prefix, cut_suffix, repository=placed.repository
        )
        if len(tokens) <= budget:
            break
        # Per-line counts can undershoot the joined text; shrink and try again.
        window = int(window * 0.8)
        suffix_share = int(suffix_share * 0.8)
    return BuiltPrompt(
        tokens=tokens,
        header=header,
        prefix=cut_prefix,
        suffix=cut_suffix,
        format_name=fmt.name,
        first_line=cursor.line - cut_prefix.count("\n"),
        context=placed,
        healed=healed,
        healed_to_code=heals_a_statement(cut_prefix, healed),
    )
