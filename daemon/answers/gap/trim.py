"""Trim an answer to the gap at the cursor, and stop the engine where the trim would cut."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from daemon.answers.gap.broken import BROKEN_LINE, broken_first_line, refusal
from daemon.answers.gap.calls import fit_call_arguments
from daemon.answers.gap.echo import drop_call_echo, drop_header_echo
from daemon.answers.gap.endings import drop_extra_closers, drop_stray_comma
from daemon.answers.gap.join import join_exploded_call
from daemon.answers.gap.rules import (
    block_exit_cut,
    drop_repeated_runs,
    drop_suffix_repeats,
    fit_indentation,
    keep_parseable,
    shape_end,
    stop_at_block_exit,
    stop_at_shape,
    suffix_repeat_cut,
)
from daemon.answers.gap.shape import Shape, blank_lead
from daemon.answers.gap.trailing import drop_trailing_comments
from daemon.checks.verify import Verdict, verify_insertion
from daemon.cursor import Cursor
from daemon.protocol import ContextSnippet

# The rules by name, in the order applied (the last four only when verifying).
RULES = (
    "join_exploded_call",
    "fit_indentation",
    "drop_header_echo",
    "drop_call_echo",
    "drop_suffix_repeats",
    "stop_at_block_exit",
    "drop_repeated_runs",
    "stop_at_shape",
    "drop_trailing_comments",
    "fit_call_arguments",
    "drop_extra_closers",
    "drop_stray_comma",
    BROKEN_LINE,
    "keep_parseable",
)


@dataclass(frozen=True)
class Trimmed:
    """An answer trimmed to the gap, and which rules changed it (in the order applied)."""

    text: str
    fired: tuple[str, ...] = ()
    verdict: Verdict | None = None  # the judgement of ``text`` (None: not verified)
    whole: Verdict | None = None  # the judgement of the answer before ``keep_parseable``

    def describe(self) -> str | None:
        """The rules that fired, for a stage's reason; None when none did."""
        return f"trimmed to the gap ({', '.join(self.fired)})" if self.fired else None


def _end_at_line_end(text: str, cursor: Cursor) -> str:
    """Without the trailing newlines and blank lines that would add blank lines to the file:
    the cursor's line already ends where the answer does."""
    if cursor.after.strip() or "\n" not in cursor.suffix:
        return text
    stripped = text.rstrip()
    return stripped if stripped.strip() else ""


# The rules of daemon.answers.gap (rules.py unless named), in the order applied: 1
# join_exploded_call (join.py: a call written one argument per line, joined onto the cursor's line
# when it fits); 2 fit_indentation (the answer's lines moved to the block at the cursor, so the
# rules after it judge indentation as the answer will stand); 3 drop_header_echo (echo.py: the
# header of the function whose body the cursor begins, written again); 4 drop_call_echo (echo.py: a
# repeat of the call the cursor is in); 5 drop_suffix_repeats (cut where the model writes the code
# below again); 6 stop_at_block_exit (cut before a line that leaves the cursor's block); 7
# drop_repeated_runs (lines repeated in a loop, or the lines right above the cursor written again);
# 8 stop_at_shape (keep what the gap takes); 9 drop_trailing_comments (trailing.py: a comment the
# model wrote after code on a line); 10 fit_call_arguments (calls.py: only with the signatures of
# the snippets in the prompt); 11 drop_extra_closers; 12 drop_stray_comma (endings.py); 13
# drop_broken_line (broken.py: an answer whose first line no later line can mend fails
# verification); 14 keep_parseable (the longest leading run of lines that verifies in the
# document).
#
# COMPLETION_RULES_VERSION (daemon/pipeline/keys.py) is part of a completion's cache key: bump it
# when a rule changes what it keeps, so that answers trimmed by the old rules expire.
def trim_to_gap(
    answer: str,
    cursor: Cursor,
    language: str | None,
    shape: Shape,
    *,
    verify: bool = True,
    context: Sequence[ContextSnippet] = (),
    line_length: int | None = None,
    skip: Collection[str] = (),
) -> Trimmed:
    """The answer cut and fitted to the gap at ``cursor``; with ``verify``, also its ending
    mended and the answer kept to the lines that verify in the document (rules 11-14, which
    parse the document). ``context``: the snippets of other files the prompt showed, whose
    signatures calls in the answer are fitted to; ``line_length``: the workspace's, for a call
    joined onto the cursor's line; ``skip``: rules left out by name (the benchmark's
    ablation; ``keep_parseable`` among them)."""
    steps = [
        (
            "join_exploded_call",
            lambda text: join_exploded_call(text, cursor, language, line_length),
        ),
        ("fit_indentation", lambda text: fit_indentation(text, shape, language)),
        (
            "drop_header_echo",
            lambda text: drop_header_echo(text, cursor.lines, cursor.line, shape, language),
        ),
        ("drop_call_echo", lambda text: drop_call_echo(text, cursor.before, language)),
        ("drop_suffix_repeats", lambda text: drop_suffix_repeats(text, cursor)),
        ("stop_at_block_exit", lambda text: stop_at_block_exit(text, shape, language)),
        (
            "drop_repeated_runs",
            lambda text: drop_repeated_runs(text, cursor.before, cursor.lines, cursor.line),
        ),
        ("stop_at_shape", lambda text: stop_at_shape(text, shape, language)),
        (
            "drop_trailing_comments",
            lambda text: drop_trailing_comments(text, cursor, language),
        ),
        (
            "fit_call_arguments",
            lambda text: fit_call_arguments(text, cursor, context, language),
        ),
    ]
    if verify:  # the rules a parser judges, as keep_parseable: not for a preview
        steps += [
            ("drop_extra_closers", lambda text: drop_extra_closers(text, cursor, language)),
            ("drop_stray_comma", lambda text: drop_stray_comma(text, cursor, language)),
        ]
    fired: list[str] = []
    text = answer
    for name, rule in steps:
        if name in skip:
            continue
        changed = rule(text)
        if _end_at_line_end(changed, cursor) != _end_at_line_end(text, cursor):
            fired.append(name)
        text = changed
    text = _end_at_line_end(text, cursor)
    if not verify:
        return Trimmed(text, tuple(fired))
    if text and BROKEN_LINE not in skip:
        why = broken_first_line(text.split("\n"), cursor, language, shape)
        if why is not None:
            rejected = refusal(why)
            return Trimmed("", (*fired, BROKEN_LINE), rejected, rejected)
    if "keep_parseable" in skip:
        verdict = verify_insertion(language, cursor.prefix, text, cursor.suffix)
        return Trimmed(text, tuple(fired), verdict, verdict)
    parsed = keep_parseable(text, cursor, language)
    if parsed.text != text:
        fired.append("keep_parseable")
    return Trimmed(parsed.text, tuple(fired), parsed.verdict, parsed.whole)


def as_written(answer: str, cursor: Cursor, language: str | None) -> Trimmed:
    """An answer not trimmed: verified whole, with its first line as the fallback."""
    parsed = keep_parseable(answer, cursor, language, longest=False)
    fired = ("keep_parseable",) if parsed.text != answer else ()
    return Trimmed(parsed.text, fired, parsed.verdict, parsed.whole)


def kept_lines(
    lines: list[str], cursor: Cursor, language: str | None, shape: Shape
) -> tuple[int, str] | None:
    """How many of the answer's complete ``lines`` the gap keeps and the rule that ends the
    answer there, once the answer is known to end; None while it may go on."""
    lead = blank_lead(lines, shape)
    if lead and lead == len(lines):
        return None
    fitted = fit_indentation("\n".join(lines[lead:]), shape, language).split("\n")
    count, rule = len(fitted), ""
    for name, end in (
        ("drop_suffix_repeats", suffix_repeat_cut(fitted, cursor)),
        ("stop_at_block_exit", block_exit_cut(fitted, shape, language)),
    ):
        if end < count:
            count, rule = end, name
    shaped = shape_end(fitted[:count], shape, language)
    if shaped is not None and (shaped < count or not rule):
        count, rule = shaped, "stop_at_shape"
    if not rule:
        return None
    return (lead + count if count else 0), rule


class GapUntil:
    """An ``until`` for the engine: the answer ends where ``trim_to_gap`` would cut it.
    ``cut_by`` names the rule that ended it (None while none has)."""

    def __init__(self, cursor: Cursor, language: str | None, shape: Shape) -> None:
        self.cursor = cursor
        self.language = language
        self.shape = shape
        self.cut_by: str | None = None
        self.refused: Verdict | None = None  # the verdict on an answer refused as written
        self._first_judged = False  # the first line is judged once, when it is complete

    def __call__(self, text: str) -> int | None:
        lines = text.split("\n")[:-1]  # only complete lines
        if not lines:
            return None
        lead = blank_lead(lines, self.shape)
        if not self._first_judged and lead < len(lines):  # the first line is complete
            self._first_judged = True
            answer = "\n".join(lines[lead:])
            fitted = fit_indentation(answer, self.shape, self.language).split("\n")
            why = broken_first_line(fitted, self.cursor, self.language, self.shape, final=False)
            if why is not None:  # nothing written after it can mend it
                self.cut_by, self.refused = BROKEN_LINE, refusal(why)
                return 0
        kept = kept_lines(lines, self.cursor, self.language, self.shape)
        if kept is None:
            return None
        count, rule = kept
        if count < len(lines) and any(line.strip() for line in lines[count:]):
            self.cut_by = rule  # lines were written that the answer leaves out
        return len("\n".join(lines[:count]).rstrip(" \t\n"))


# The cuts of rules 2, 4, 5 and 7 of trim_to_gap, as the engine's ``until``: generation stops where
# the trim would cut instead of writing lines that are thrown away.
def gap_until(cursor: Cursor, language: str | None, shape: Shape) -> GapUntil:
    """An ``until`` that stops the engine where ``trim_to_gap`` would cut the answer."""
    return GapUntil(cursor, language, shape)
