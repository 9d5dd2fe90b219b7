"""Completions that stop where the gap at the cursor ends.
The gap's shape, and the rules that trim an answer to it (``trim`` gives their order).
"""

from daemon.answers.gap.calls import Signature, fit_call_arguments, signatures
from daemon.answers.gap.echo import drop_call_echo, drop_header_echo
from daemon.answers.gap.endings import drop_extra_closers, drop_stray_comma
from daemon.answers.gap.join import join_exploded_call
from daemon.answers.gap.rules import (
    Parsed,
    drop_repeated_runs,
    drop_suffix_repeats,
    fit_indentation,
    keep_parseable,
    stop_at_block_exit,
    stop_at_shape,
)
from daemon.answers.gap.shape import Shape, ShapeKind, gap_shape
from daemon.answers.gap.trailing import drop_trailing_comments
from daemon.answers.gap.trim import (
    RULES,
    GapUntil,
    Trimmed,
    as_written,
    gap_until,
    trim_to_gap,
)

__all__ = [
    "RULES",
    "GapUntil",
    "Parsed",
    "Shape",
    "ShapeKind",
    "Signature",
    "Trimmed",
    "as_written",
    "drop_call_echo",
    "drop_extra_closers",
    "drop_header_echo",
    "drop_repeated_runs",
    "drop_stray_comma",
    "drop_suffix_repeats",
    "drop_trailing_comments",
    "fit_call_arguments",
    "fit_indentation",
    "gap_shape",
    "gap_until",
    "join_exploded_call",
    "keep_parseable",
    "signatures",
    "stop_at_block_exit",
    "stop_at_shape",
    "trim_to_gap",
]
