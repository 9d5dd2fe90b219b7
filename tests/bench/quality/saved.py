"""Answers kept on disk as each part of a benchmark run ends, so a long run that was stopped
(a time limit, a machine needed for something else) resumes where it was instead of starting
over: a part whose answers are saved under the same run's settings is not asked again.

The file is JSON lines, one part's answers a line, appended and flushed as the part ends; a
line cut short by a stop mid-write is ignored. Saved answers say nothing of the code that gave
them: resume a run only on the code that started it.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tests.bench.quality.runs import Answer


class SavedAnswers:
    """The answers of one run's parts, by model and part, under the run's ``settings``; each
    answer a ``kind`` (a dataclass, ``Answer`` unless told)."""

    def __init__(self, path: Path, settings: dict[str, Any], kind: Any = Answer) -> None:
        self.path = path
        self.settings = json.loads(json.dumps(settings, default=str))
        self.parts: dict[tuple[str, str], list[Any]] = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the part being written when the run stopped
                if record.get("settings") == self.settings:
                    answers = [kind(**answer) for answer in record["answers"]]
                    self.parts[(record["model"], record["part"])] = answers

    def get(self, model: str, part: str) -> list[Any] | None:
        return self.parts.get((model, part))

    def put(self, model: str, part: str, answers: list[Any]) -> None:
        self.parts[(model, part)] = answers
        record = {
            "model": model,
            "part": part,
            "settings": self.settings,
            "answers": [asdict(answer) for answer in answers],
        }
        with self.path.open("a+b") as out:
            out.seek(0, 2)
            if out.tell():
                out.seek(-1, 2)
                if out.read(1) != b"\n":
                    out.write(b"\n")  # after a line cut short by a stop
            out.write(json.dumps(record).encode() + b"\n")
            out.flush()
