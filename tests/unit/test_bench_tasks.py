"""The quality benchmark's documents: the author's own text, put back, passes the task's tests.

If the benchmark built its documents wrongly (a lost newline, the cursor a line off), every
figure it prints would be wrong; the canonical solutions catch that.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.quality.judge import judge_all, passes
from tests.bench.quality.tasks import editor_case, fim_case, indented_case, read_jsonl, spread

SAMPLE = read_jsonl(Path(__file__).parent.parent / "data" / "infilling_sample.jsonl")


@pytest.mark.parametrize(
    "make", [fim_case, editor_case, indented_case], ids=["fim", "editor", "indented"]
)
def test_the_authors_text_passes_in_every_setting(make) -> None:  # type: ignore[no-untyped-def]
    cases = [make(task) for task in SAMPLE]
    assert all(judge_all([case.program(case.expected) for case in cases]))


def test_the_editor_setting_puts_the_cursor_on_an_empty_line_of_its_own() -> None:
    for task in SAMPLE:
        case = editor_case(task)
        lines = case.text.split("\n")
        assert lines[case.line] == "" and case.column == 0
        # The missing lines hold the whole gap.
        assert task["canonical_solution"].strip() in case.expected


def test_the_indented_setting_puts_the_cursor_after_the_lines_indentation() -> None:
    for task in SAMPLE:
        editor, case = editor_case(task), indented_case(task)
        line = case.text.split("\n")[case.line]
        assert line.strip() == "" and case.column == len(line)
        assert case.before + case.expected == editor.before + editor.expected
        assert case.after == editor.after
        assert not case.expected[:1].isspace()


def test_the_fim_setting_is_exactly_the_gap() -> None:
    task = SAMPLE[-1]
    case = fim_case(task)
    assert case.before == task["prompt"] and case.after == task["suffix"]
    assert case.expected == task["canonical_solution"]


def test_a_wrong_answer_fails_and_a_hanging_one_times_out() -> None:
    case = fim_case(SAMPLE[0])
    assert not passes(case.program("    return None\n"))
    assert not passes("while True:\n    pass\n", timeout_s=1)


def test_spread_takes_items_over_the_whole_list() -> None:
    items = [{"i": str(i)} for i in range(100)]
    picked = spread(items, 4)
    assert [p["i"] for p in picked] == ["0", "25", "50", "75"]
    assert spread(items[:3], 10) == items[:3]
