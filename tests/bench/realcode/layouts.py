"""Which part of assist's completion prompt costs or gains lines on real code: the prompt alone.

On the real-repository cases (tests/bench/realcode), the model is given each prompt layout and
decodes greedily, with no deadline and no post-processing, up to the end of the first line (32
tokens at most); the first line is scored by exact match against the author's. So the figures
isolate the prompt from the daemon's time budget and trimming rules:
  bare      the model's own FIM prompt over the text around the cursor (1,536 tokens, 256 after),
  assist    assist's prompt: the profile header, the repository context of the snippets the
            cursor's line names (daemon/prompt/relevance.py), its window layout,
  ungated   assist's prompt with every snippet the client sent, named by the line or not,
  nohdr     assist's prompt without the profile header,
  noctx     assist's prompt without the repository context,
  plain     assist's prompt with neither (its window layout alone),
  healed    assist's prompt ending before the cursor's last token, which the model writes
            whole (token healing: daemon/prompt/healing.py).
Answers are appended to OUT as JSON lines, and a rerun resumes from them. A layout that gives
a case the very prompt another layout gave it (assist's prompt where the line names every
snippet, or none) is given that answer again: greedy decoding of the same tokens.
Run: .venv/bin/python tests/bench/realcode/layouts.py bare,assist,ungated,noctx 20 OUT
(the second argument: cases of each cursor kind).
"""

from __future__ import annotations

import json
import sys
import time
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import xxhash
from llama_cpp import LogitsProcessorList

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from daemon.cursor import Cursor
from daemon.prompt.build import build_prompt
from daemon.prompt.context import PromptContext
from daemon.prompt.header import render_header
from daemon.prompt.relevance import snippets_for_line
from daemon.settings import load_settings
from models.pieces import PieceIndex
from models.resolve import resolve_model
from tests.bench.quality.raw import RawModel
from tests.bench.realcode.cases import KINDS, Document, document, load
from tests.bench.realcode.checkout import Checkouts
from tests.bench.realcode.score import expected_line, first_line

WINDOW_TOKENS = 1536
AFTER_TOKENS = 256
FIRST_LINE_TOKENS = 32


def prompt_key(tokens: list[int]) -> str:
    return xxhash.xxh3_64_hexdigest(array("i", tokens).tobytes())


class Layouts:
    def __init__(self, work: Path) -> None:
        self.settings = load_settings()
        path = resolve_model(None, self.settings.cache_dir, self.settings.model).path
        self.raw = RawModel(path, 4096)
        self.model = self.raw.model
        self.checkouts = Checkouts(work)
        self.answers: dict[str, str] = {}  # prompt key -> answer
        self.last_prompt = ""
        self.pieces: PieceIndex | None = None

    def first_line(self, tokens: list[int], lead: str = "") -> str:
        """Greedy decoding until a line break follows some code (or leads the text); with a
        ``lead``, the answer must begin with it, and it is not part of the answer."""
        key = prompt_key(tokens) + (f"+{lead!r}" if lead else "")
        if key not in self.answers:
            self.answers[key] = self._decode(tokens, lead)
        self.last_prompt = key
        return self.answers[key]

    def _decode(self, tokens: list[int], lead: str) -> str:
        data = b""
        text = ""
        llm = self.model.llm
        wanted = lead.encode("utf-8")
        if wanted and self.pieces is None:
            model = self.model
            ends = self.raw.end_tokens
            self.pieces = PieceIndex([model.piece(t) for t in range(model.n_vocab)], ends)

        def constrain(_ids: Any, scores: Any) -> Any:
            left = wanted[len(data) :]
            if not left or self.pieces is None:
                return scores
            allowed = self.pieces.agreeing(left)
            masked = np.full_like(scores, -np.inf)
            masked[allowed] = scores[allowed]
            return masked

        processors = LogitsProcessorList([constrain])
        generated = llm.generate(tokens, temp=0.0, top_k=1, reset=True, logits_processor=processors)
        for count, token in enumerate(generated):
            if token in self.raw.end_tokens or count >= FIRST_LINE_TOKENS:
                break
            data += self.model.piece(token)
            if len(data) < len(wanted):
                continue
            text = data[len(wanted) :].decode("utf-8", errors="ignore")
            stops = [s for s in self.raw.stops if s in text]
            if stops:
                return text[: min(text.find(s) for s in stops)]
            if "\n" in text.lstrip("\n") or (text.strip() and "\n" in text):
                break
        return text

    def bare(self, doc: Document) -> str:
        model = self.model
        suffix = self.raw._keep_lines(doc.after.split("\n"), AFTER_TOKENS, from_end=False)
        room = WINDOW_TOKENS - len(model.tokenize_text(suffix))
        prefix = self.raw._keep_lines(doc.before.split("\n"), room, from_end=True)
        return self.first_line(model.format.build(model, prefix, suffix))

    def assist(
        self,
        doc: Document,
        *,
        header: bool = True,
        context: bool = True,
        gated: bool = True,
        heal: bool = False,
    ) -> str:
        req = self.checkouts.request(doc, context=context)
        cursor = Cursor.locate(req.text, req.line, req.column)
        shown = render_header(req.profile, req.language, req.path) if header else ""
        budget = self.settings.context_budget_tokens
        snippets = snippets_for_line(req.context, cursor.before) if gated else req.context
        ctx = PromptContext(snippets, budget, req.language, req.path, req.repository)
        prompt = build_prompt(
            self.model.format,
            self.model,
            cursor,
            budget=WINDOW_TOKENS,
            suffix_budget=AFTER_TOKENS,
            header=shown,
            context=ctx,
            heal=heal,
        )
        return self.first_line(prompt.tokens, prompt.healed)

    def answer(self, layout: str, doc: Document) -> str:
        if layout == "bare":
            return self.bare(doc)
        header = layout not in ("nohdr", "plain")
        context = layout not in ("noctx", "plain")
        gated = layout != "ungated"
        return self.assist(
            doc, header=header, context=context, gated=gated, heal=layout == "healed"
        )


def main() -> int:
    layouts = sys.argv[1].split(",")
    limit = int(sys.argv[2])
    out = Path(sys.argv[3])
    cases = [c for kind in KINDS for c in [c for c in load() if c.kind == kind][:limit]]
    done: dict[tuple[str, str], dict[str, object]] = {}
    if out.exists():
        for line in out.read_text().splitlines():
            row = json.loads(line)
            done[(row["v"], row["id"])] = row
    work = out.parent / (out.stem + "-work")
    work.mkdir(exist_ok=True)
    runner = Layouts(work)
    runner.answers.update(
        {str(r["prompt"]): str(r["text"]) for r in done.values() if "prompt" in r}
    )
    with out.open("a") as saved:
        for layout in layouts:
            began = time.time()
            for case in cases:
                if (layout, case.id) in done:
                    continue
                text = runner.answer(layout, document(case))
                right = first_line(text, case.kind) == expected_line(case.expected, case.kind)
                row = {"v": layout, "id": case.id, "kind": case.kind, "text": text, "ok": right}
                row["prompt"] = runner.last_prompt
                done[(layout, case.id)] = row
                saved.write(json.dumps(row) + "\n")
                saved.flush()
            print(f"{layout}: {time.time() - began:.0f} s", flush=True)
    for layout in layouts:
        rows = [done[(layout, c.id)] for c in cases]
        kinds = {k: sum(bool(r["ok"]) for r in rows if r["kind"] == k) for k in KINDS}
        right = sum(bool(r["ok"]) for r in rows)
        print(
            f"{layout:<7} exact {right}/{len(rows)}  "
            + "  ".join(f"{k} {n}" for k, n in kinds.items())
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
