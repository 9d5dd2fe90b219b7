"""Model candidates of a repair: continuations at the error, and rewrites of the broken span.
The model proposes only when no parser hint (``daemon.repair.hints``) verifies.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from functools import partial
from typing import Any

from daemon.checks.syntax import Diagnostic
from daemon.cursor import Cursor
from daemon.engine.scheduler import Admission
from daemon.language import language_info
from daemon.pipeline.backend import Backend, JobResult, budget
from daemon.prompt.build import build_prompt
from daemon.protocol import Span
from daemon.repair.diagnosis import Problems
from daemon.repair.intent import keeps_every_token
from daemon.repair.layout import code_end
from daemon.settings import Settings
from models.loaded import prompt_room

# Temperatures of successive model candidates: the first is the model's best guess.
TEMPERATURES = (0.0, 0.4, 0.7, 0.9, 1.0)


@dataclass
class ModelCandidates:
    """The model's proposals for one repair, run in the repair's place in the queue. Every
    proposal is only a candidate: the pipeline keeps it only when the file then parses and
    nothing new broke."""

    backend: Backend
    settings: Settings
    admission: Admission
    header: str
    language: str
    tokens: int = 0
    last_job: JobResult | None = None

    def usable(self, result: JobResult) -> bool:
        """Count a model job; whether it ended on its own with some text."""
        self.tokens += result.tokens
        self.last_job = result
        return result.complete and bool(result.text.strip())

    async def continuations(
        self, document: str, target: Diagnostic, deadline: float
    ) -> AsyncGenerator[Any, None]:
        """Let the model continue the code from where the parser stopped understanding it.

        At the error's position (and at the end of its line) the model's own next characters
        are often the missing piece: a ``:`` after a signature, ``))`` after an argument list.
        Yields token events, then per position a list of candidate documents: the line
        completed by the model, and (for a short continuation) the continuation inserted
        before the rest of the line.
        """
        lines = document.split("\n")
        if target.line >= len(lines):
            return
        line = lines[target.line]
        positions = sorted({min(target.column, len(line)), code_end(self.language, line)})
        model = self.backend.model
        budget_tokens = min(self.settings.prompt_budget_tokens, model.facts.n_ctx - 48)
        for column in positions:
            if time.perf_counter() >= deadline - 0.1:
                return
            prompt = await asyncio.to_thread(
                partial(
                    build_prompt,
                    model.format,
                    model,
                    Cursor.locate(document, target.line, column),
                    budget=budget_tokens,
                    suffix_budget=self.settings.suffix_budget_tokens,
                    header=self.header,
                )
            )
            relay = self.backend.run(
                prompt.tokens,
                budget(32, deadline, 0.0),
                admission=self.admission,
                stage="logic",
                stops=("\n",),
                candidate=0,
            )
            async for event in relay:
                yield event
            result = relay.result
            if not self.usable(result):
                continue
            head = "\n".join([*lines[: target.line], line[:column]])
            tail = lines[target.line + 1 :]
            completed = head + result.text + ("\n" + "\n".join(tail) if tail else "")
            proposals = []
            if keeps_every_token(self.language, line, line[:column] + result.text):
                proposals.append(completed)
            continuation = result.text.strip()
            if 0 < len(continuation) <= 3:
                rest = "\n".join([line[column:], *tail])
                proposals.append(head + continuation + rest)
            yield proposals

    async def rewrite(
        self, document: str, problems: Problems, span: Span, index: int, deadline: float
    ) -> AsyncGenerator[Any, None]:
        """Yield token events while the model rewrites the span, then the candidate document."""
        lines = document.split("\n")
        before = lines[: span.start_line]
        after = lines[span.end_line :]
        anchor = next((line for line in after if line.strip()), None)
        original_span = lines[span.start_line : span.end_line]
        gap = "\n".join(before) + ("\n" if before else "")
        text = gap + "\n".join(after)
        model = self.backend.model
        settings = self.settings
        budget_tokens = min(
            settings.prompt_budget_tokens, prompt_room(model.facts.n_ctx, settings.fix_max_tokens)
        )
        prompt = await asyncio.to_thread(
            partial(
                build_prompt,
                model.format,
                model,
                Cursor.locate(text, len(before), 0),
                budget=budget_tokens,
                suffix_budget=settings.suffix_budget_tokens,
                header=self.header + _notes(self.language, problems.targets),
            )
        )
        max_lines = len(original_span) + 2

        def until(generated: str) -> int | None:
            complete = generated.split("\n")[:-1]
            offset = 0
            for number, line in enumerate(complete):
                if anchor is not None and line.strip() == anchor.strip() and number > 0:
                    return offset
                offset += len(line) + 1
                if number + 1 >= max_lines:
                    return offset
            return None

        temperature = TEMPERATURES[min(index, len(TEMPERATURES) - 1)]
        limits = budget(settings.fix_max_tokens, deadline, temperature, seed=index + 1)
        relay = self.backend.run(
            prompt.tokens,
            limits,
            admission=self.admission,
            stage="logic",
            until=until,
            candidate=index,
        )
        async for event in relay:
            yield event
        result = relay.result
        if not self.usable(result):
            return
        replacement = result.text[:-1] if result.text.endswith("\n") else result.text
        if keeps_every_token(self.language, "\n".join(original_span), replacement):
            yield "\n".join([*before, replacement, *after])


def _notes(language: str, targets: list[Diagnostic]) -> str:
    """The errors as comment lines, so the model knows what to repair."""
    info = language_info(language)
    comment = info.line_comment if info and info.line_comment else "#"
    lines = [f"{comment} Syntax error on line {d.line + 1}: {d.message}" for d in targets[:5]]
    lines.append(f"{comment} The code below is the corrected version.")
    return "\n".join(lines) + "\n"
