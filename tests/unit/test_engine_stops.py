"""Stop-string handling of the engine: hold back only what could still become a stop."""

from __future__ import annotations

from daemon.engine.worker import _find_stop, _gate_lines, _stop_prefix_length


def test_nothing_is_held_when_no_stop_can_start():
    assert _stop_prefix_length("return x", ("\n\n\n",), 3) == 0


def test_a_partial_stop_at_the_end_is_held():
    assert _stop_prefix_length("x\n\n", ("\n\n\n",), 3) == 2
    assert _stop_prefix_length("abc<|e", ("<|endoftext|>",), 13) == 3


def test_first_stop_wins():
    assert _find_stop("a\nb\n\n\nc", ("\n\n\n", "b")) == 2
    assert _find_stop("abc", ("x",)) is None


def test_line_gate_releases_complete_lines_only():
    never = lambda text: None  # noqa: E731
    assert _gate_lines(never, "", "a = 1\nb = ", "") == ("a = 1\n", "b = ", False)
    assert _gate_lines(never, "", "b = ", "") == ("", "b = ", False)


def test_line_gate_ends_where_until_says():
    def until(text: str) -> int | None:
        return text.find("def ") if "def " in text else None

    emit, pending, ended = _gate_lines(until, "x = 1\n", "y = 2\ndef g():\n", "")
    assert ended and emit == "y = 2\n" and pending == ""
