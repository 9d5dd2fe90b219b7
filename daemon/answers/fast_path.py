"""The fast path: one pass, whose candidates are fitted to the gap, checked and ranked.
Its stages: the first line (``skeleton``), the whole answer (``logic``), the ``final`` one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any

from daemon.answers.blocks import block_end
from daemon.answers.candidates import Candidate, candidate, ranked, with_new_names
from daemon.answers.gap import GapUntil, Trimmed, as_written, gap_until, trim_to_gap
from daemon.answers.gap.shape import Shape
from daemon.answers.gate import Gate, Offer
from daemon.answers.prepared import BLOCK_STOPS, Completion
from daemon.answers.typing_index import Writing, first_written_line
from daemon.checks.verify import Verdict
from daemon.cursor import Cursor
from daemon.engine.jobs import Budget, Continuation, Until
from daemon.engine.scheduler import Admission
from daemon.indentation import indent_of
from daemon.pipeline.backend import Backend, JobResult, budget
from daemon.settings import Settings

# The fast path writes at most this many lines after the cursor's line.
FAST_MAX_LINES = 8
# Where no answer is worth offering, at most this many more are asked for, one at a time, each
# from a first token none before it began with, while time is left.
SECOND_TRIES = 3

# Keeps a complete, verified answer: its text, the job's result, its tokens, the offer.
Keep = Callable[[Completion, str, JobResult, int, Offer | None], Awaitable[None]]
Fit = Callable[[str, Cursor, str | None, Shape], Trimmed]


class FastPath:
    def __init__(self, backend: Backend, settings: Settings, gate: Gate, keep: Keep) -> None:
        self.backend = backend
        self.settings = settings
        self.gate = gate
        self.keep = keep

    async def answer(
        self, c: Completion, admission: Admission, writing: Writing
    ) -> AsyncGenerator[Any, None]:
        """The answer's events: the model's tokens as they come, then its stages."""
        deadline = c.received + c.route.deadline_ms / 1000
        wanted = c.req.candidates or 1
        limits = budget(
            c.route.max_tokens,
            deadline,
            self.settings.temperature,
            candidates=max(self.settings.candidates, wanted),
            lead=c.prompt.healed,
            lead_to_code=c.prompt.healed_to_code,
            fork_anyway=wanted > 1,
        )
        # A short block, unless the client set its own token budget.
        shape = replace(c.route.shape, max_lines=None if c.req.max_tokens else FAST_MAX_LINES + 1)
        until = self.until(c, shape)
        text = ""
        skeleton: str | None = None
        writing.fit = lambda written: self.first_line(c, written, shape)
        relay = self.backend.run(
            c.prompt.tokens, limits, admission=admission, stage="logic", stops=c.stops, until=until
        )
        async for event in relay:
            text += event.text
            writing.add(event.text)
            yield event
            head = self._head(text, shape)
            if skeleton is None and (line := first_written_line(head)) is not None:
                skeleton = self.first_line(c, line, shape)
                yield c.stage("skeleton", skeleton)
        result = relay.result
        if skeleton is None:
            head = self._head(result.text, shape)
            skeleton = self.first_line(c, first_written_line(head + "\n") or "", shape)
            yield c.stage("skeleton", skeleton)
        fitted, best = await self._candidates(c, admission, limits, shape, until, result)
        chosen = best[0] if best else fitted[0]
        trimmed = chosen.trimmed
        whole = trimmed.whole or Verdict(True)
        shown = trimmed.text if self.settings.postprocess else chosen.written
        yield c.stage("logic", shown if whole.ok else skeleton, whole)
        verdict = self._final_verdict(chosen, fitted[0])
        confidence = chosen.confidence if result.own is not None else None
        others = [each for each in best if each is not chosen]
        offer = Offer(trimmed.text, confidence, others, faults=chosen.faults)
        if result.complete and verdict.ok:
            await self.keep(c, trimmed.text, result, result.tokens, offer)
        async for event in self.gate.final(c, offer, verdict, result, cached=False):
            yield event

    def _head(self, text: str, shape: Shape) -> str:
        """The written text from where the answer's first line starts: on an empty line the
        model's leading line breaks are not a line of the answer."""
        return text.lstrip("\n") if self.settings.postprocess and shape.on_empty_line else text

    async def _candidates(
        self,
        c: Completion,
        admission: Admission,
        limits: Budget,
        shape: Shape,
        until: Until | None,
        result: JobResult,
    ) -> tuple[list[Candidate], list[Candidate]]:
        """Every continuation written, fitted to the gap, and those worth offering, best first
        (one more is asked for when none is)."""
        fit = self._fit(c)
        own = result.own or Continuation(result.text, result.reason, result.tokens)
        written = [own, *result.alternatives]
        fitted = []
        for member, each in enumerate(written):
            fitted.append(await asyncio.to_thread(_judged, fit, member, each, c, shape))
        if isinstance(until, GapUntil) and until.cut_by:
            first = fitted[0]
            if until.refused is not None:  # refused as written: the job stopped at its first line
                refused = until.refused
                fitted[0] = candidate(0, own, Trimmed("", (until.cut_by,), refused, refused))
            elif until.cut_by not in first.trimmed.fired:
                fired = (until.cut_by, *first.trimmed.fired)
                fitted[0] = replace(first, trimmed=replace(first.trimmed, fired=fired))
        best = ranked(fitted)
        postprocess = self.settings.postprocess
        tries = SECOND_TRIES if postprocess and result.complete else 0
        while tries and not any(not each.faults for each in best):
            tries -= 1
            second = await self._second(c, admission, limits, shape, written)
            if second is None:
                break
            fitted.append(await asyncio.to_thread(_judged, fit, len(written), second, c, shape))
            written.append(second)
            best = ranked(fitted)
        if best and c.language == "python" and postprocess:
            # Every answer, not only several: the gate holds back one with a new undefined name.
            checked = await asyncio.to_thread(with_new_names, best, c.prefix, c.suffix)
            best = ranked(checked)
        return fitted, best

    def _fit(self, c: Completion) -> Fit:
        """How a continuation is fitted to the gap: trimmed to it (with calls to the
        workspace's functions fitted to the signatures the prompt showed), or as written
        when ``postprocess`` is off."""
        if not self.settings.postprocess:
            return _as_written
        profile = c.req.profile
        return partial(
            trim_to_gap,
            context=c.prompt.context.snippets,
            line_length=profile.style.line_length if profile else None,
        )

    def _final_verdict(self, chosen: Candidate, first: Candidate) -> Verdict:
        """The chosen answer's verdict, its reason naming the rules that trimmed it and why
        the model's first choice was set aside, when it was."""
        trimmed = chosen.trimmed
        verdict = trimmed.verdict or Verdict(True)
        described = trimmed.describe() if self.settings.postprocess else None
        if described and verdict.ok:
            reason = f"{described}; {verdict.reason}" if verdict.reason else described
            verdict = replace(verdict, reason=reason)
        if chosen.member and verdict.ok:
            why = "; ".join(first.faults) or "its text was empty after trimming"
            note = f"another candidate: the model's first choice was set aside ({why})"
            verdict = replace(
                verdict, reason=f"{note}; {verdict.reason}" if verdict.reason else note
            )
        return verdict

    def until(self, c: Completion, shape: Shape) -> Until | None:
        """The judge that ends a fast-path answer where its gap (or its block) ends."""
        if self.settings.postprocess and shape.kind != "line":
            return gap_until(c.cursor, c.language, shape)
        if c.stops == BLOCK_STOPS:
            indent = indent_of(c.prefix.rsplit("\n", 1)[-1])
            return block_end(indent, language=c.language, max_lines=shape.max_lines)
        return None

    async def _second(
        self,
        c: Completion,
        admission: Admission,
        limits: Budget,
        shape: Shape,
        written: list[Continuation],
    ) -> Continuation | None:
        """When every answer came to nothing once trimmed (most often the line below, written
        again) or failed verification (prose where code goes): one more, greedy from the most
        likely first token none of them began with (``SECOND_TRIES`` at most, one at a time).
        Its prompt is still in the KV cache, so it costs a short decode; it is not streamed.
        None when the first tokens are unknown or no time is left."""
        barred = tuple(each.first_token for each in written if each.first_token is not None)
        if not barred or time.perf_counter() >= limits.deadline:
            return None
        again = replace(limits, candidates=1, logprobs=True, not_first=barred)
        relay = self.backend.run(
            c.prompt.tokens,
            again,
            admission=admission,
            stage="logic",
            stops=c.stops,
            until=self.until(c, shape),
        )
        async for _ in relay:
            pass
        result = relay.result
        if not result.complete:
            return None
        return result.own or Continuation(result.text, result.reason, result.tokens)

    def first_line(self, c: Completion, line: str, shape: Shape) -> str:
        """The skeleton: the answer's first written line (trimmed to the gap, without
        verification)."""
        if not self.settings.postprocess:
            return line
        return trim_to_gap(line, c.cursor, c.language, shape, verify=False).text


def _judged(fit: Fit, member: int, written: Continuation, c: Completion, shape: Shape) -> Candidate:
    """A continuation fitted to the gap and checked in the workspace (off the event loop: the
    checks may parse the whole document)."""
    trimmed = fit(written.text, c.cursor, c.language, shape)
    return candidate(member, written, trimmed, c.language, c.cursor)


def _as_written(answer: str, cursor: Cursor, language: str | None, shape: Shape) -> Trimmed:
    """The answer as the model wrote it (``postprocess`` off): verified whole, with its first
    line as the fallback."""
    return as_written(answer, cursor, language)
