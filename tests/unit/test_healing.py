"""Token healing: where the prompt ends, which tokens may begin the answer, and the lead taken
off the answer's text."""

from __future__ import annotations

import re

from daemon.cursor import Cursor
from daemon.engine.answer_text import AnswerText
from daemon.prompt.build import build_prompt
from daemon.prompt.healing import healed_tail, heals_a_statement
from models.families import QWEN_CODER
from models.pieces import PieceIndex
from tests.unit.fake_vocab import CharVocab

# A vocabulary of whole words, runs of blanks and single other characters.
_WORDS = re.compile(r" ?\w+| +|.", re.S)


class WordVocab(CharVocab):
    def __init__(self) -> None:
        super().__init__(bos=None)
        self.ids: dict[str, int] = {}

    def tokenize_text(self, text: str) -> list[int]:
        return [self.ids.setdefault(p, 2000 + len(self.ids)) for p in _WORDS.findall(text)]


def test_the_last_word_of_the_line_is_healed():
    vocab = WordVocab()
    assert healed_tail(vocab, "    self.co") == "co"
    assert healed_tail(vocab, "x = value") == " value"
    assert healed_tail(vocab, "        ") == "        "
    assert healed_tail(vocab, "") == ""


def test_a_line_that_ends_in_punctuation_is_not_healed():
    vocab = WordVocab()
    assert healed_tail(vocab, "f(") == ""
    assert healed_tail(vocab, "x: List[") == ""
    assert healed_tail(vocab, "self.") == ""


def test_one_token_a_character_heals_the_last_character():
    assert healed_tail(CharVocab(bos=None), "abc") == "c"


PIECES = [b"", b"co", b"con", b"console", b"c", b"cx", b" co", b"(", b"()", b"(self", b"   ", b" "]


def test_agreeing_tokens_start_with_the_text_or_begin_it():
    index = PieceIndex(PIECES)
    assert sorted(PIECES[t] for t in index.agreeing(b"con")) == [b"c", b"co", b"con", b"console"]
    assert sorted(PIECES[t] for t in index.agreeing(b"(")) == [b"(", b"()", b"(self"]
    assert sorted(PIECES[t] for t in index.agreeing(b"    ")) == [b" ", b"   "]


def test_after_blanks_no_token_adds_more_blanks():
    pieces = [b"  ", b"    ", b"      ", b"  x", b"    x", b"    \n", b"     x"]
    agreeing = PieceIndex(pieces).agreeing(b"    ")
    assert sorted(pieces[t] for t in agreeing) == [b"  ", b"    ", b"    \n", b"    x"]


def test_what_is_left_of_an_indentation_ends_with_code_not_blanks_alone():
    pieces = [b" ", b"   ", b"    ", b"    \n", b" x", b" return", b"x", b"  "]
    index = PieceIndex(pieces)
    plain = sorted(pieces[t] for t in index.agreeing(b"    "))
    assert plain == [b" ", b"  ", b"   ", b"    ", b"    \n"]
    # the shorter starts remain: another token writes the rest, with the code
    to_code = sorted(pieces[t] for t in index.agreeing(b"    ", to_code=True))
    assert to_code == [b" ", b"  ", b"   "]
    assert sorted(pieces[t] for t in index.agreeing(b" ", to_code=True)) == [b" return", b" x"]
    assert b" " in [pieces[t] for t in index.agreeing(b" ")]
    # A vocabulary with no token of a tab and code: the tab alone, as without ``to_code``.
    tabs = [b"\t", b"return", b"\t\t"]
    only = PieceIndex(tabs).agreeing(b"\t", to_code=True)
    assert [tabs[t] for t in only] == [b"\t"]


def test_an_indentation_that_begins_a_statement_is_written_with_its_code():
    assert heals_a_statement("class A:\n    def f(self):\n", "        ")
    assert heals_a_statement("x = 1\n\n", "\t")
    assert heals_a_statement("", "    ")  # the window's first line
    assert heals_a_statement("int f() {\n", "    ")  # a block's brace
    # A line that goes on the expression above it: a number may begin it.
    assert not heals_a_statement("NUMBERS = [\n    1,\n", "    ")
    assert not heals_a_statement("call(\n", "    ")
    assert not heals_a_statement("total = 1 +\n", "    ")
    assert not heals_a_statement("x = 1 \\\n", "    ")
    # Not an indentation: blanks after code on the line, a word, nothing healed.
    assert not heals_a_statement("x =", " ")
    assert not heals_a_statement("x = 1\n", "co")
    assert not heals_a_statement("x = 1\n", "")


def test_the_prompt_says_where_the_healed_indentation_begins_a_statement():
    for text, to_code in (("def f():\n\t", True), ("XS = [\n\t1,\n\t", False)):
        lines = text.split("\n")
        cursor = Cursor.locate(text, len(lines) - 1, len(lines[-1]))
        built = build_prompt(
            QWEN_CODER, FIM_VOCAB, cursor, budget=200, suffix_budget=50, header="", heal=True
        )
        assert built.healed == "\t" and built.healed_to_code is to_code


def test_the_answer_text_keeps_what_the_lead_asks_of_its_last_blank():
    assert AnswerText((), None, None, lead="    ", to_code=True).to_code
    assert not AnswerText((), None, None, lead="    ").to_code


def test_excluded_and_empty_tokens_never_agree():
    index = PieceIndex(PIECES, excluded=[2])
    assert 2 not in index.agreeing(b"con")
    assert 0 not in index.agreeing(b"")


def test_the_lead_is_taken_off_the_answer_across_tokens():
    answer = AnswerText(("\n",), None, None, lead="    co")
    shown = "".join(answer.add(i, p)[0] for i, p in enumerate([b"   ", b" con", b"sole", b" ="]))
    assert shown == "nsole =" and answer.text == "nsole =" and answer.leading == b""
    assert answer.ids == [0, 1, 2, 3]


def test_a_token_that_ends_a_lead_of_blanks_exactly_bars_blanks_next():
    answer = AnswerText((), None, None, lead="    ")
    answer.add(0, b"  ")
    assert not answer.led_to_blanks  # two blanks of the lead are still to come
    answer.add(1, b"  ")
    assert answer.led_to_blanks and answer.progress().led_to_blanks
    answer.add(2, b"return")
    assert not answer.led_to_blanks and answer.text == "return"
    ended_inside = AnswerText((), None, None, lead="  ")
    ended_inside.add(0, b"  x")
    assert not ended_inside.led_to_blanks


def test_after_blanks_only_tokens_that_begin_otherwise():
    pieces = [b" ", b"  x", b"\t", b"x", b"\n", b"(", b""]
    assert sorted(pieces[t] for t in PieceIndex(pieces).after_blanks()) == [b"\n", b"(", b"x"]


def test_a_job_that_yields_inside_the_lead_resumes_it():
    answer = AnswerText((), None, None, lead="(self")
    answer.add(0, b"(")
    resumed = AnswerText((), None, answer.progress(), lead="(self")
    assert resumed.leading == b"self"
    assert resumed.add(1, b"self")[0] == "" and resumed.add(2, b".x")[0] == ".x"


def test_a_token_that_disagrees_with_the_lead_is_an_error():
    answer = AnswerText((), None, None, lead="co")
    try:
        answer.add(0, b"x")
    except ValueError as exc:
        assert "lead" in str(exc)
    else:
        raise AssertionError("a disagreeing token was taken")


FIM_VOCAB = CharVocab({"<|fim_prefix|>": 10, "<|fim_suffix|>": 11, "<|fim_middle|>": 12}, bos=None)


def test_a_healed_prompt_ends_before_the_last_token_of_the_cursors_line():
    text = "def f():\n    return val\n"
    cursor = Cursor.locate(text, 1, len("    return va"))
    plain = build_prompt(QWEN_CODER, FIM_VOCAB, cursor, budget=200, suffix_budget=50, header="")
    healed = build_prompt(
        QWEN_CODER, FIM_VOCAB, cursor, budget=200, suffix_budget=50, header="", heal=True
    )
    assert plain.healed == "" and healed.healed == "a"
    assert healed.prefix == plain.prefix[:-1]
    assert len(healed.tokens) == len(plain.tokens) - 1
