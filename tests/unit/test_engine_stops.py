"""Stop-string handling of the engine: hold back only what could still become a stop."""

from __future__ import annotations

from daemon.engine import _find_stop, _stop_prefix_length
from daemon.service import completion_stops


def test_nothing_is_held_when_no_stop_can_start():
    assert _stop_prefix_length("return x", ("\n\n\n",), 3) == 0


def test_a_partial_stop_at_the_end_is_held():
    assert _stop_prefix_length("x\n\n", ("\n\n\n",), 3) == 2
    assert _stop_prefix_length("abc<|e", ("<|endoftext|>",), 13) == 3


def test_first_stop_wins():
    assert _find_stop("a\nb\n\n\nc", ("\n\n\n", "b")) == 2
    assert _find_stop("abc", ("x",)) is None


def test_mid_line_completion_stops_at_the_end_of_the_line():
    assert completion_stops(")") == ("\n",)
    assert completion_stops("   ") == ("\n\n\n",)
