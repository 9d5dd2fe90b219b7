"""Completion quality: HumanEval infilling, HumanEval and a cross-file set, through the daemon.

A completion is right when the program then passes the task's tests (run in a subprocess,
never in the daemon). For each installed model, in one run:

  infilling  the multi-line and random-span sets, in the FIM paper's setting (the gap's text is
             exactly what is missing), the editor's (the cursor on an empty line of its
             own) and the indenting editor's (the cursor after that line's indentation,
             where an editor leaves it): assist as shown; the raw model (llama-cpp-python,
             the model's FIM prompt, the same document); and the ablation: no profile
             header, no post-processing, no token healing. ``--settings`` picks some of the
             three.
  humaneval  a signature and a docstring, the body to write (the deep path): assist against
             the raw model continuing the prompt with HumanEval's stop sequences; the p50 and
             p90 of the time to the ``logic`` and ``final`` stages.
  cross-file lines that call a function imported from a sibling module (a package installed
             here), completed with and without repository context, as in a file the editor
             has open (a first request, then the measured one).

Headline: pass@1 of the text as shown (cross-file: the author's line, exactly). Beside it: the
first line alone (cross-file: whether the call binds to the callee's signature), and exact
matches.
Run: .venv/bin/python tests/bench/bench_quality.py [--tasks 40] [--humaneval 164] [--models ...]
A whole run takes over an hour on two cores. ``--variants`` asks only some of the variants
(``assist raw``: no ablation); ``--answers FILE`` keeps each part's answers in FILE as the part
ends, so the same command run again after a stop, or with more variants, asks only the parts
not kept yet; ``--tasks 0``, ``--humaneval 0`` or ``--crossfile 0`` leave a set out.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from daemon.client.daemon_client import DaemonClient
from daemon.settings import load_settings
from daemon.workspace.context import gather_context
from daemon.workspace.profile import compute_profile
from models.catalog import KNOWN_MODELS
from models.resolve import resolve_model
from tests.bench.quality.crossfile import CrossFileLine, cross_file_lines, fits_signature
from tests.bench.quality.judge import judge_all
from tests.bench.quality.raw import HUMANEVAL_STOPS, RawModel
from tests.bench.quality.runs import Answer, ask, daemon, p50, percentile, request, wait_idle
from tests.bench.quality.saved import SavedAnswers
from tests.bench.quality.tasks import (
    INFILLING_SETS,
    SETTINGS,
    Case,
    humaneval_cases,
    infilling_cases,
)

VARIANTS = ("assist", "raw", "no header", "no post", "no context", "no healing")
# A small workspace that states what the tasks are: Python 3.11, nothing else.
PYPROJECT = '[project]\nname = "tasks"\nversion = "0"\nrequires-python = ">=3.11"\n'


@dataclass
class Figures:
    """One row of a table: how many passed as shown and by a proxy (the first line alone; for
    cross-file lines, whether the call binds to the callee's signature), and latency."""

    label: str
    passed: int = 0
    first_line: int = 0  # the proxy's count
    exact: int = 0
    total: int = 0
    ms: list[float] = field(default_factory=list)
    proxy: str = "first line"
    logic_ms: list[float] = field(default_factory=list)
    final_ms: list[float] = field(default_factory=list)

    def row(self) -> str:
        share = 100 / self.total if self.total else 0.0
        line = (
            f"  {self.label:<22} {self.passed:>4}/{self.total:<4} {self.passed * share:5.1f}%"
            f"   {self.proxy} {self.first_line * share:5.1f}%   exact {self.exact * share:5.1f}%"
            f"   p50 {p50(self.ms):6.0f} ms  p90 {percentile(self.ms, 0.9):6.0f} ms"
        )
        if self.logic_ms:
            line += (
                f"   logic p50/p90 {p50(self.logic_ms):5.0f}/{percentile(self.logic_ms, 0.9):5.0f}"
                f"  final p50/p90 {p50(self.final_ms):5.0f}/{percentile(self.final_ms, 0.9):5.0f}"
            )
        return line


def score(label: str, cases: list[Case], answers: list[Answer]) -> Figures:
    shown = judge_all([c.program(a.text) for c, a in zip(cases, answers, strict=True)])
    first = judge_all([c.program(a.first_line) for c, a in zip(cases, answers, strict=True)])
    figures = Figures(label, sum(shown), sum(first), total=len(cases))
    figures.exact = sum(
        a.text.strip() == c.expected.strip() for c, a in zip(cases, answers, strict=True)
    )
    figures.ms = [a.ms for a in answers]
    figures.logic_ms = [a.stages["logic"] for a in answers if "logic" in a.stages]
    figures.final_ms = [a.stages["final"] for a in answers if "final" in a.stages]
    return figures


def score_lines(label: str, lines: list[CrossFileLine], answers: list[Answer]) -> Figures:
    """Cross-file lines have no tests: right means the author's line, exactly; beside it, the
    share of answers whose call binds to the callee's signature."""
    figures = Figures(label, total=len(lines), proxy="fits signature")
    for line, answer in zip(lines, answers, strict=True):
        got = answer.text.split("\n", 1)[0].rstrip()
        figures.passed += got == line.expected
        figures.first_line += fits_signature(line, got)
        figures.exact += got == line.expected
    figures.ms = [a.ms for a in answers]
    return figures


def through(client: DaemonClient, cases: list[Case], profile: Any, **extra: Any) -> list[Answer]:
    answers = []
    for case in cases:
        req = request(case.text, case.line, case.column, "tasks/solution.py", profile, **extra)
        answers.append(ask(client, req))
    return answers


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def bench_model(
    name: str, args: argparse.Namespace, work: Path, saved: SavedAnswers
) -> dict[str, list[Figures]]:
    base = load_settings(model=name, metrics_path=work / "metrics.sqlite3")
    path = resolve_model(None, base.cache_dir, name).path
    workspace = work / "tasks"
    workspace.mkdir(exist_ok=True)
    (workspace / "pyproject.toml").write_text(PYPROJECT)
    profile = compute_profile(workspace, workspace / "solution.py", "", "python")

    infilling = {
        (set_name, setting): infilling_cases(set_name, setting, args.tasks)
        for set_name in INFILLING_SETS
        for setting in args.settings
        if args.tasks
    }
    humaneval = humaneval_cases(args.humaneval)
    lines = cross_file_lines(args.packages, args.crossfile_from + args.crossfile)
    lines = lines[args.crossfile_from :]
    contexts = [gather_context(line.path, line.text, line.line, line.root, None) for line in lines]

    answers: dict[str, list[Answer]] = {}
    runs: list[tuple[dict[str, Any], list[tuple[str, Callable[[DaemonClient], list[Answer]]]]]]
    runs = [({}, []), ({"postprocess": False}, []), ({"token_healing": False}, [])]
    for (set_name, setting), cases in infilling.items():
        key = f"{set_name}|{setting}"
        runs[0][1].append((f"{key}|assist", lambda c, cs=cases: through(c, cs, profile)))
        runs[0][1].append((f"{key}|no header", lambda c, cs=cases: through(c, cs, None)))
        runs[1][1].append((f"{key}|no post", lambda c, cs=cases: through(c, cs, profile)))
        runs[2][1].append((f"{key}|no healing", lambda c, cs=cases: through(c, cs, profile)))
    if humaneval:
        runs[0][1].append(("humaneval|assist", lambda c: through(c, humaneval, profile)))
        runs[0][1].append(("humaneval|no header", lambda c: through(c, humaneval, None)))
        runs[1][1].append(("humaneval|no post", lambda c: through(c, humaneval, profile)))
    if lines:
        runs[0][1].append(("cross-file|assist", lambda c: cross(c, lines, contexts)))
        runs[0][1].append(("cross-file|no context", lambda c: cross(c, lines, None)))
        runs[1][1].append(("cross-file|no post", lambda c: cross(c, lines, contexts)))
        runs[2][1].append(("cross-file|no healing", lambda c: cross(c, lines, contexts)))

    for overrides, jobs in runs:
        jobs = [(label, job) for label, job in jobs if wanted(label, args.variants)]
        pending = [(label, job) for label, job in jobs if not reuse(saved, name, label, answers)]
        if not pending:
            continue
        with daemon(base, work, **overrides) as client:
            warm_up = humaneval[:1] or next(iter(infilling.values()), [])[:1]
            through(client, warm_up, profile)
            for label, job in pending:
                progress(f"{name}: {label}")
                answers[label] = job(client)
                saved.put(name, label, answers[label])

    raw_jobs: list[tuple[str, Callable[[RawModel], list[Answer]]]] = []
    for (set_name, setting), cases in infilling.items():
        raw_jobs.append(
            (
                f"{set_name}|{setting}|raw FIM",
                lambda raw, cs=cases: [
                    as_answer(raw.fim(c.before, c.after, base.fast_max_tokens)) for c in cs
                ],
            )
        )
    raw_jobs.append(
        (
            "humaneval|raw",
            lambda raw: [
                as_answer(raw.plain(c.before, base.deep_max_tokens, HUMANEVAL_STOPS))
                for c in humaneval
            ],
        )
    )
    raw_jobs.append(
        (
            "cross-file|raw FIM",
            lambda raw: [
                as_answer(raw.fim(line.before, line.after, base.fast_max_tokens)) for line in lines
            ],
        )
    )
    raw_jobs = [
        (label, job)
        for label, job in raw_jobs
        if wanted(label, args.variants)
        and (humaneval or label != "humaneval|raw")
        and (lines or label != "cross-file|raw FIM")
    ]
    pending_raw = [
        (label, job) for label, job in raw_jobs if not reuse(saved, name, label, answers)
    ]
    if pending_raw:
        progress(f"{name}: the raw model")
        raw = RawModel(path, base.n_ctx)
        try:
            raw.fim("def warm_up():\n    ", "\n", 4)
            for label, raw_job in pending_raw:
                answers[label] = raw_job(raw)
                saved.put(name, label, answers[label])
        finally:
            raw.close()

    progress(f"{name}: running the tests")
    tables: dict[str, list[Figures]] = {}
    for (set_name, setting), cases in infilling.items():
        key = f"{set_name}|{setting}"
        tables[f"{set_name}, {setting} setting"] = [
            score(variant, cases, answers[f"{key}|{variant}"])
            for variant in ("assist", "raw FIM", "no header", "no post", "no healing")
            if f"{key}|{variant}" in answers
        ]
    if humaneval:
        tables["HumanEval (deep path)"] = [
            score(variant, humaneval, answers[f"humaneval|{variant}"])
            for variant in ("assist", "raw", "no header", "no post")
            if f"humaneval|{variant}" in answers
        ]
    if lines:
        tables["cross-file lines (exact line)"] = [
            score_lines(variant, lines, answers[f"cross-file|{variant}"])
            for variant in ("assist", "no context", "raw FIM", "no post", "no healing")
            if f"cross-file|{variant}" in answers
        ]
    return tables


def wanted(label: str, variants: list[str]) -> bool:
    """Whether the part ``label`` ("set|setting|variant") is one of the variants asked for."""
    variant = label.rsplit("|", 1)[-1]
    return (variant.split(" ", 1)[0] if variant.startswith("raw") else variant) in variants


def reuse(saved: SavedAnswers, model: str, label: str, answers: dict[str, list[Answer]]) -> bool:
    """Whether the part's answers were saved by an earlier run (then they are in ``answers``)."""
    found = saved.get(model, label)
    if found is None:
        return False
    progress(f"{model}: {label}: {len(found)} answers saved earlier")
    answers[label] = found
    return True


def cross(client: DaemonClient, lines: list[CrossFileLine], contexts: Any) -> list[Answer]:
    """Each line as an editor asks for it in a file it has open: a first request (which, on a
    slow machine, answers from a shorter window and has the whole one read afterwards), then
    the measured one once the daemon is idle."""
    answers = []
    for index, line in enumerate(lines):
        path = line.path.relative_to(line.root)
        context = contexts[index] if contexts else []
        req = request(line.text, line.line, line.column, path, None, context=context)
        ask(client, req)
        wait_idle(client)
        answers.append(ask(client, req))
    return answers


def as_answer(raw: Any) -> Answer:
    return Answer(raw.text, raw.ms)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    installed = [m.name for m in KNOWN_MODELS if m.installed()]
    parser.add_argument("--models", nargs="+", default=installed, help="catalogue model names")
    parser.add_argument("--tasks", type=int, default=40, help="tasks per infilling set and setting")
    parser.add_argument(
        "--settings", nargs="+", choices=SETTINGS, default=list(SETTINGS), help="infilling settings"
    )
    parser.add_argument("--humaneval", type=int, default=164, help="HumanEval tasks (0: none)")
    parser.add_argument("--crossfile", type=int, default=60, help="cross-file lines (0: none)")
    parser.add_argument(
        "--crossfile-from",
        type=int,
        default=0,
        help="skip the set's first N lines (a second slice, to check a change on lines it was "
        "not made by)",
    )
    parser.add_argument("--packages", nargs="+", default=["click", "jinja2"])
    parser.add_argument(
        "--variants",
        nargs="+",
        choices=VARIANTS,
        default=list(VARIANTS),
        help="what to ask: assist as shown, the raw model, and the ablation's variants",
    )
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument(
        "--answers",
        type=Path,
        help="keep each part's answers in this file as it ends; a run stopped before its end "
        "is resumed by running it again with the same file and settings",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="assist-bench-quality-"))
    answers_path = args.answers or work / "answers.jsonl"
    signature = {
        k: v for k, v in vars(args).items() if k not in ("json", "answers", "models", "variants")
    }
    saved = SavedAnswers(answers_path, signature)
    progress(f"answers kept in {answers_path}")
    report: dict[str, Any] = {}
    for name in args.models:
        tables = bench_model(name, args, work, saved)
        print(f"\nbench_quality: {name}, CPU, pass@1 of the text as shown (beside: a proxy)")
        for title, rows in tables.items():
            print(f"{title}")
            for figures in rows:
                print(figures.row())
        report[name] = {t: [asdict(f) for f in rows] for t, rows in tables.items()}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
