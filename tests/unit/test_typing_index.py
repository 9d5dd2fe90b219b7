"""Typing the first characters of a shown answer still hits it."""

from __future__ import annotations

from daemon.answers.typing_index import TypingIndex


def test_typed_characters_of_the_answer_hit_the_rest():
    index = TypingIndex()
    key = index.key("model|plain|header", "\n\nprint(x)\n")
    prefix = "def f(path):\n    "
    index.remember(key, prefix, "with open(path) as f:\n        return f.read()", "stop", 12)
    hit = index.match(key, prefix + "with op")
    assert hit is not None and hit.answer == "en(path) as f:\n        return f.read()"
    assert index.match(key, prefix + "with ol") is None  # typed something else
    assert index.match(key, prefix) is None  # nothing typed: that is an exact hit's job
    other = index.key("model|plain|header", "\nprint(y)\n")
    assert index.match(other, prefix + "with op") is None  # the text after the cursor differs


def test_the_text_before_the_answer_must_be_the_same():
    index = TypingIndex()
    key = index.key("c", "")
    index.remember(key, "a = 1\nb = ", "compute()", "stop", 3)
    assert index.match(key, "a = 2\nb = comp") is None
    assert index.match(key, "a = 1\nb = comp").answer == "ute()"


def test_forget_drops_a_rejected_answer():
    index = TypingIndex()
    key = index.key("c", "")
    index.remember(key, "x = ", "value", "stop", 1)
    index.forget(key, "value")
    assert index.match(key, "x = va") is None


def test_an_answer_typed_whole_has_nothing_more_only_where_it_ended():
    index = TypingIndex()
    key = index.key("c", "\n    return total\n")
    index.remember(key, "    ", "total += x", "stop", 4)
    hit = index.match(key, "    total += x")
    assert hit is not None and hit.answer == "" and hit.finish_reason == "stop"
    assert index.match(key, "    total += x\n") is None  # typed past it: a new question
    index.remember(key, "x = ", "compute(a, b", "length", 48)  # cut by the token budget
    assert index.match(key, "x = compute(a, b") is None
    assert index.match(key, "x = compute(a").answer == ", b"


def test_the_candidates_that_begin_with_what_was_typed_come_along():
    index = TypingIndex()
    key = index.key("c", "")
    shown = ("total = sum(rows)", "total += row", "count += 1")
    index.remember(key, "    ", "total = 0", "stop", 4, shown)
    hit = index.match(key, "    tot")
    assert hit is not None and hit.answer == "al = 0"
    assert hit.alternatives == ("al = sum(rows)", "al += row")
    # Typed into a candidate the answer does not begin with (cycled to it): it is the answer.
    hit = index.match(key, "    total +")
    assert hit is not None and hit.answer == "= row" and hit.alternatives == ()
    hit = index.match(key, "    co")
    assert hit is not None and hit.answer == "unt += 1"
    assert index.match(key, "    count += 1") is None  # a candidate typed whole: a new question
    assert index.match(key, "    x") is None
