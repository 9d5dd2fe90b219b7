"""A generating job's text: stop strings held back and cut, whole lines, exact resumption."""

from __future__ import annotations

from daemon.engine.answer_text import AnswerText, _find_stop, _gate_lines, _stop_prefix_length


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


def feed(answer: AnswerText, pieces: list[bytes]) -> tuple[str, bool]:
    shown, ended = "", False
    for token, piece in enumerate(pieces):
        emit, ended = answer.add(token, piece)
        shown += emit
        if ended:
            break
    return shown, ended


def test_a_stop_string_split_across_tokens_ends_the_answer_before_it():
    answer = AnswerText(("\n\n",), None, None)
    shown, ended = feed(answer, [b"x = 1", b"\n", b"\ny = 2"])
    assert ended and shown == "x = 1" and answer.finish(complete=True) == ""
    assert answer.text == "x = 1"


def test_a_character_split_across_tokens_is_shown_whole():
    answer = AnswerText((), None, None)
    shown, _ = feed(answer, ["é".encode()[:1], "é".encode()[1:] + b"!"])
    assert shown == "é!"


def test_lines_are_released_whole_and_until_ends_the_answer():
    def until(text: str) -> int | None:
        return text.index("end\n") if "end\n" in text else None

    answer = AnswerText((), until, None)
    shown, ended = feed(answer, [b"a = 1\nb", b" = 2\n", b"end\nmore\n"])
    assert ended and shown == "a = 1\nb = 2\n"


def test_an_answer_resumed_from_its_progress_goes_on_exactly():
    pieces = [b"total", b" = ", "é".encode()[:1], "é".encode()[1:], b"\n", b"done"]
    whole = AnswerText(("STOP",), None, None)
    expected, _ = feed(whole, pieces)
    expected += whole.finish(complete=True)
    first = AnswerText(("STOP",), None, None)
    shown, _ = feed(first, pieces[:3])
    resumed = AnswerText(("STOP",), None, first.progress())
    for token, piece in enumerate(pieces[3:]):
        shown += resumed.add(token, piece)[0]
    shown += resumed.finish(complete=True)
    assert shown == expected == "total = é\ndone"
