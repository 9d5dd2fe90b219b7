"""Completions on real code: lines of installed multi-file packages, assist against the bare model.

The cases (``tests/bench/realcode/cases.jsonl``: 306 lines of six packages, three cursor kinds,
a fixed seed) are asked of, in one run:

  assist            the daemon as shipped, each request built as ``assist complete FILE --line L
                    --column C`` builds it in a checkout of the package (profile, repository
                    context, the file's path);
  bare FIM          the same model through llama-cpp-python with its own FIM prompt over the
                    lines around the cursor, cut to assist's token budget (1,536, 256 after the
                    cursor), greedy, what it writes until it stops or 48 tokens;
  llama-server      llama.cpp's own server (built from the sources of the pinned llama-cpp-python,
                    ``tests/bench/engine/llama_server.py``) with the same model, asked at
                    ``/infill`` as llama.vim asks it (256 lines before the cursor's line, 64
                    after, the typed part of the line as ``prompt``, its ``n_indent``), with a
                    batch of 1,536 tokens, so that its own cut of the FIM prompt (three quarters
                    before the cursor) has assist's budget; greedy, 48 tokens, no time limit;
  assist, three candidates, no context, no profile, no post-processing, no healing
                    the daemon with the candidates decoded even where they cost more than the
                    limit (a CPU), and without each component in turn (the repository's
                    snippets, the profile's header, every trimming rule, token healing); each
                    rule left out on its own is scored offline, on assist's greedy text trimmed
                    again;
  assist, first request
                    the first request of the "assist" run at each place (the document not read).

Scored on the answer's first line (CrossCodeEval's and RepoEval's line metrics): exact match of
the rest of the line, edit similarity, empty answers; p50 and p90 latency. Figures per cursor
kind and over all; for the candidates, how often the author's line is among those shown; for
the confidence gate, the share shown and exact among those shown at each threshold (with the
workspace checks that hold an answer back, as shipped, and by the probability alone).

Run: .venv/bin/python tests/bench/bench_realcode.py [--limit N] [--kinds ...] [--systems ...]
[--answers F]. ``--limit N`` asks the first N cases of each kind, ``--kinds`` only those kinds;
``--answers FILE`` keeps each system's answers as it ends, so the same command run again asks
only what is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from daemon.answers.candidates import undefined_fault
from daemon.answers.fast_path import FAST_MAX_LINES
from daemon.answers.gap import RULES, trim_to_gap
from daemon.answers.route import decide_route
from daemon.client.daemon_client import DaemonClient
from daemon.cursor import Cursor
from daemon.protocol import DoneEvent, ErrorEvent, StageEvent, TokenEvent
from daemon.settings import Settings, load_settings
from models.resolve import resolve_model
from tests.bench.quality.raw import RawModel
from tests.bench.quality.runs import daemon, wait_idle
from tests.bench.quality.saved import SavedAnswers
from tests.bench.realcode.cases import KINDS, Document, RealCase, document, load
from tests.bench.realcode.checkout import Checkouts
from tests.bench.realcode.score import Figures, expected_line, first_line

# Each daemon run: its settings' overrides and the request's, and the label of its warm answers
# (the first request's, where the run is the shipped one, is labelled too).
ABLATIONS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "assist": ({}, {}),
    # Where decoding candidates together costs more than the limit (a CPU), the daemon leaves
    # them out: this run decodes them all the same.
    "assist, three candidates": ({"candidates_cost_limit": 0.0}, {}),
    "assist, no context": ({}, {"context": []}),
    "assist, no profile": ({}, {"profile": None}),
    "assist, no post-processing": ({"postprocess": False}, {}),
    "assist, no healing": ({"token_healing": False}, {}),
}
SYSTEMS = (*ABLATIONS, "assist, first request", "bare FIM", "llama-server")
# The gate's thresholds the curve is printed at.
THRESHOLDS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6)
# llama.vim's defaults: lines before and after the cursor's line it sends.
VIM_PREFIX_LINES, VIM_SUFFIX_LINES = 256, 64


@dataclass
class Reply:
    """What one system showed for one case."""

    text: str  # inserted at the cursor, as shown
    ms: float
    raw: str = ""  # the model's text before any post-processing, where the system tells it
    reason: str | None = None  # the final stage's reason
    route: str | None = None
    finish: str | None = None
    alternatives: list[str] = field(default_factory=list)
    error: str | None = None
    # The model's probability of the answer's first line, and of each alternative's.
    confidence: float | None = None
    alternative_confidences: list[float | None] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)  # the workspace checks the answer failed


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def ask_daemon(client: DaemonClient, checkouts: Checkouts, doc: Document, **extra: Any) -> Reply:
    request = checkouts.request(doc).model_copy(update=extra)
    reply = Reply("", 0.0)
    started = time.perf_counter()
    for event in client.complete(request):
        if isinstance(event, TokenEvent):
            reply.raw += event.text
        elif isinstance(event, StageEvent) and event.stage == "final":
            reply.text = event.text if event.ok else ""
            reply.reason = event.reason
        elif isinstance(event, ErrorEvent):
            reply.error = event.message
        elif isinstance(event, DoneEvent):
            reply.route = event.route_reason
            reply.finish = event.finish_reason
            reply.text = event.withheld or reply.text  # the gate is judged from the curve
            reply.confidence = event.confidence
            reply.faults = list(event.faults)
            reply.alternatives = [a.text for a in event.alternatives]
            reply.alternative_confidences = [a.confidence for a in event.alternatives]
    reply.ms = (time.perf_counter() - started) * 1000
    return reply


def through_daemon(
    base: Settings,
    work: Path,
    checkouts: Checkouts,
    docs: list[Document],
    settings: dict[str, Any],
    request: dict[str, Any],
) -> tuple[list[Reply], list[Reply]]:
    """Each case asked as in an editor: the first request at the place (a document the daemon
    has not read: on a slow machine it answers from a shorter window and reads the whole one
    afterwards), then, once the daemon is idle, the next request there. Both lists. The gate
    is off (``min_confidence`` 0): its curve is drawn from the confidences."""
    with daemon(base, work, min_confidence=0.0, **settings) as client:
        first, then = [], []
        for index, doc in enumerate(docs):
            first.append(ask_daemon(client, checkouts, doc, **request))
            wait_idle(client)
            then.append(ask_daemon(client, checkouts, doc, **request))
            if index % 25 == 24:
                progress(f"  {index + 1}/{len(docs)}")
        return first, then


def through_bare(model: RawModel, docs: list[Document], max_tokens: int) -> list[Reply]:
    replies = []
    for doc in docs:
        answer = model.fim(doc.before, doc.after, max_tokens)
        replies.append(Reply(answer.text, answer.ms, raw=answer.text))
    return replies


def vim_request(doc: Document, n_predict: int) -> dict[str, Any]:
    """The ``/infill`` request llama.vim sends for the document's cursor (its local context:
    whole lines around the cursor's line, the typed part of that line as ``prompt``; a line of
    only white space is completed from its start, as llama.vim does)."""
    case = doc.case
    lines = doc.text.split("\n")
    current = lines[case.line]
    typed, rest = current[: case.column], current[case.column :]
    indent = len(current) - len(current.lstrip())
    if not current.strip():
        typed, rest, indent = "", "", 0
    before = lines[max(0, case.line - VIM_PREFIX_LINES) : case.line]
    after = lines[case.line + 1 : case.line + 1 + VIM_SUFFIX_LINES]
    return {
        "input_prefix": "\n".join(before) + "\n",
        "input_suffix": rest + "\n" + "\n".join(after) + "\n",
        "input_extra": [],
        "prompt": typed,
        "n_predict": n_predict,
        "n_indent": indent,
        "top_k": 1,
        "top_p": 0.90,
        "samplers": ["top_k", "top_p", "infill"],
        "stream": False,
        "cache_prompt": True,
    }


def through_server(model_path: Path, docs: list[Document], n_predict: int) -> list[Reply]:
    from models.backend import cpu_threads
    from tests.bench.engine.llama_server import LlamaServer, build

    server = LlamaServer(build(), model_path, 1, 4096, cpu_threads(), batch=1536)
    try:
        replies = []
        for index, doc in enumerate(docs):
            started = time.perf_counter()
            answer = server.infill(vim_request(doc, n_predict))
            ms = (time.perf_counter() - started) * 1000
            text = answer.get("content", "")
            replies.append(Reply(text, ms, raw=text, finish=str(answer.get("stop_type"))))
            if index % 25 == 24:
                progress(f"  {index + 1}/{len(docs)}")
        return replies
    finally:
        server.close()


def table(cases: list[RealCase], parts: dict[str, list[Reply]]) -> list[str]:
    out = []
    for kind in (*KINDS, "all"):
        chosen = [i for i, c in enumerate(cases) if kind in ("all", c.kind)]
        if not chosen:
            continue
        out.append(f"{kind} ({len(chosen)} cases)")
        for label, replies in parts.items():
            figures = Figures(label)
            for i in chosen:
                case = cases[i]
                got = first_line(replies[i].text, case.kind)
                figures.add(got, expected_line(case.expected, case.kind), replies[i].ms)
            out.append(figures.row())
    return out


def candidates_table(cases: list[RealCase], replies: list[Reply]) -> list[str]:
    """How often the author's line is among the candidates shown (the answer and its
    alternatives), per kind."""
    out = []
    for kind in (*KINDS, "all"):
        chosen = [i for i, c in enumerate(cases) if kind in ("all", c.kind)]
        found = 0
        shown = 0
        for i in chosen:
            case, reply = cases[i], replies[i]
            want = expected_line(case.expected, case.kind)
            texts = [reply.text, *reply.alternatives]
            shown += len([t for t in texts if t.strip()])
            found += any(first_line(t, case.kind) == want for t in texts)
        if chosen:
            out.append(
                f"  {kind:<10} right line among those shown {found:>4}/{len(chosen):<4} "
                f"({100 * found / len(chosen):5.1f}%)  candidates shown {shown / len(chosen):.2f}"
                " a case"
            )
    return out


def gate_curve(
    cases: list[RealCase], replies: list[Reply], bare: list[Reply] | None, checks: bool = True
) -> list[str]:
    """The share of requests a threshold shows, and exact among those shown; with ``checks``,
    as the gate ships, an answer that failed a check that holds it back is not shown."""
    out = []
    if bare is not None:
        exact = sum(
            first_line(r.text, c.kind) == expected_line(c.expected, c.kind)
            for c, r in zip(cases, bare, strict=True)
        )
        out.append(f"  the bare model: exact {100 * exact / len(cases):.1f}% of all requests")
    for threshold in THRESHOLDS:
        shown = exact = 0
        for case, reply in zip(cases, replies, strict=True):
            if not reply.text.strip():
                continue
            if reply.confidence is not None and reply.confidence < threshold:
                continue
            if checks and undefined_fault(reply.faults):
                continue
            shown += 1
            got = first_line(reply.text, case.kind)
            exact += got == expected_line(case.expected, case.kind)
        share = 100 * shown / len(cases)
        among = 100 * exact / shown if shown else float("nan")
        out.append(
            f"  threshold {threshold:4.2f}  shown {shown:>4}/{len(cases):<4} ({share:5.1f}%)"
            f"  exact among shown {among:5.1f}%"
        )
    return out


def rule_ablation(
    settings: Settings, checkouts: Checkouts, docs: list[Document], replies: list[Reply]
) -> list[str]:
    """Each post-processing rule left out in turn, on the model's own (greedy) text of each
    answer as the engine wrote it: the first line's exact matches, against all rules on."""
    prepared = []
    for doc, reply in zip(docs, replies, strict=True):
        request = checkouts.request(doc)
        cursor = Cursor.locate(request.text, request.line, request.column)
        route = decide_route(settings, cursor, "python")
        shape = replace(route.shape, max_lines=FAST_MAX_LINES + 1)
        prepared.append((doc.case, request, cursor, shape, reply.raw))
    out = []
    for left_out in ("", *RULES):
        figures = Figures(f"without {left_out}" if left_out else "every rule")
        for case, request, cursor, shape, raw in prepared:
            trimmed = trim_to_gap(
                raw, cursor, "python", shape, context=request.context, skip=(left_out,)
            )
            shown = trimmed.text if trimmed.verdict is None or trimmed.verdict.ok else ""
            got = first_line(shown, case.kind)
            figures.add(got, expected_line(case.expected, case.kind), 0.0)
        out.append(figures.row().split("  p50")[0])
    return out


def select(
    cases: list[RealCase], limit: int | None, kinds: tuple[str, ...] = KINDS
) -> list[RealCase]:
    """The first ``limit`` cases of each of ``kinds``, kind by kind; without a limit, every case
    of them in the file's order (the order answers saved by earlier runs are in)."""
    if not limit:
        return [c for c in cases if c.kind in kinds]
    return [c for kind in kinds for c in [c for c in cases if c.kind == kind][:limit]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="the first N cases of each kind")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--answers", type=Path, help="keep each system's answers in this file")
    parser.add_argument("--json", type=Path, help="also write every answer to this file")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assist-bench-realcode-"))
    kinds = tuple(kind for kind in KINDS if kind in args.kinds)
    cases = select(load(), args.limit, kinds)
    docs = [document(case) for case in cases]
    selection = {"limit": args.limit, **({"kinds": list(kinds)} if kinds != KINDS else {})}
    saved = SavedAnswers(args.answers or work / "answers.jsonl", selection, Reply)
    base = load_settings(model=args.model, metrics_path=work / "metrics.sqlite3")
    checkouts = Checkouts(work)

    # Each daemon run gives two systems: the first request at each place, and the next.
    runs: dict[tuple[str, ...], Callable[[], tuple[list[Reply], list[Reply]]]] = {}
    for label, (settings, request) in ABLATIONS.items():
        labels: tuple[str, ...] = (
            ("assist, first request", label) if label == "assist" else ("", label)
        )
        runs[labels] = partial(through_daemon, base, work, checkouts, docs, settings, request)
    parts: dict[str, list[Reply]] = {}
    for label in args.systems:
        found = saved.get(args.model, label)
        if found is not None:
            parts[label] = found
    for labels, run in runs.items():
        if not any(label and label in args.systems and label not in parts for label in labels):
            continue
        progress(f"{labels[-1]}: {len(docs)} cases")
        for label, replies in zip(labels, run(), strict=True):
            if label:
                parts[label] = replies
                saved.put(args.model, label, replies)
    if "bare FIM" in args.systems and "bare FIM" not in parts:
        progress(f"bare FIM: {len(docs)} cases")
        path = resolve_model(None, base.cache_dir, args.model).path
        raw = RawModel(path, base.n_ctx)
        try:
            raw.fim("def warm_up():\n    ", "\n", 4)
            parts["bare FIM"] = through_bare(raw, docs, base.fast_max_tokens)
        finally:
            raw.close()
        saved.put(args.model, "bare FIM", parts["bare FIM"])
    if "llama-server" in args.systems and "llama-server" not in parts:
        progress(f"llama-server: {len(docs)} cases")
        path = resolve_model(None, base.cache_dir, args.model).path
        parts["llama-server"] = through_server(path, docs, base.fast_max_tokens)
        saved.put(args.model, "llama-server", parts["llama-server"])
    ordered = {label: parts[label] for label in SYSTEMS if label in parts}
    print(f"\nbench_realcode: {args.model}, CPU, the answer's first line against the author's")
    for line in table(cases, ordered):
        print(line)
    several = ordered.get("assist, three candidates")
    if several is not None:
        print("\nassist, three candidates: the answer and its alternatives")
        for line in candidates_table(cases, several):
            print(line)
        print("\nthe confidence gate (three candidates: the first line's probability)")
        for line in gate_curve(cases, several, ordered.get("bare FIM")):
            print(line)
    if "assist" in ordered:
        print("\neach post-processing rule left out (assist's greedy text, trimmed again)")
        for line in rule_ablation(base, checkouts, docs, ordered["assist"]):
            print(line)
        print("\nthe confidence gate (assist: the first line's probability) with the checks")
        for line in gate_curve(cases, ordered["assist"], ordered.get("bare FIM")):
            print(line)
        print("\nthe first line's probability alone")
        for line in gate_curve(cases, ordered["assist"], None, checks=False):
            print(line)
    if args.json:
        dump = {label: [asdict(r) for r in replies] for label, replies in ordered.items()}
        args.json.write_text(json.dumps({"cases": [c.id for c in cases], **dump}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
