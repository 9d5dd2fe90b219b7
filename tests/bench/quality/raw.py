"""The raw model: llama-cpp-python with the model's own prompt, none of assist's pipeline.

``fim`` lays the document out in the model's fill-in-the-middle format (the prefix alone for a
model without one) and returns what the model writes until it stops, its token budget runs
out or one of its format's end pieces appears: what a plain FIM client would show. ``plain``
continues a prompt as HumanEval's harness does, with the harness's stop sequences.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from models.gguf import read_header
from models.loaded import LoadedModel
from models.resolve import ResolvedModel

HUMANEVAL_STOPS = ("\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#", "\n@")


@dataclass(frozen=True)
class RawAnswer:
    text: str
    ms: float


class RawModel:
    def __init__(self, path: Path, n_ctx: int = 4096) -> None:
        resolved = ResolvedModel(path, "configured", read_header(path))
        self.model = LoadedModel(resolved, n_ctx, 512, None, -1, None, None)
        self.stops = tuple(self.model.facts.stop_strings)
        self.end_tokens = frozenset(self.model.facts.stop_tokens)

    @property
    def format_name(self) -> str:
        return self.model.format.name

    def fim(
        self,
        prefix: str,
        suffix: str,
        max_tokens: int,
        budget: int = 1536,
        suffix_budget: int = 256,
    ) -> RawAnswer:
        """A FIM client's prompt: the lines nearest the cursor that fit ``budget`` tokens
        (``suffix_budget`` of them after the cursor), as assist's own default budgets."""
        if not self.model.format.supports_fim:
            suffix = ""
        suffix = self._keep_lines(suffix.split("\n"), suffix_budget, from_end=False)
        room = budget - len(self.model.tokenize_text(suffix))
        prefix = self._keep_lines(prefix.split("\n"), room, from_end=True)
        tokens = self.model.format.build(self.model, prefix, suffix)
        return self._generate(tokens, max_tokens, self.stops)

    def _keep_lines(self, lines: list[str], budget: int, *, from_end: bool) -> str:
        kept: list[str] = []
        used = 0
        for line in reversed(lines) if from_end else lines:
            used += len(self.model.tokenize_text(line + "\n"))
            if used > budget:
                break
            kept.append(line)
        return "\n".join(reversed(kept) if from_end else kept)

    def plain(self, prompt: str, max_tokens: int, stops: tuple[str, ...]) -> RawAnswer:
        head = [self.model.bos_token] if self.model.format.add_bos and self.model.bos_token else []
        tokens = head + self.model.tokenize_text(prompt)
        return self._generate(tokens, max_tokens, self.stops + stops)

    def _generate(self, tokens: list[int], max_tokens: int, stops: tuple[str, ...]) -> RawAnswer:
        llm = self.model.llm
        started = time.perf_counter()
        data = b""
        text = ""
        for count, token in enumerate(llm.generate(tokens, temp=0.0, top_k=1, reset=True)):
            if token in self.end_tokens or count >= max_tokens:
                break
            data += self.model.piece(token)
            text = data.decode("utf-8", errors="ignore")
            hits = [i for stop in stops if (i := text.find(stop)) >= 0]
            if hits:
                text = text[: min(hits)]
                break
        return RawAnswer(text, (time.perf_counter() - started) * 1000)

    def close(self) -> None:
        self.model.close()
