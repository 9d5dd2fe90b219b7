"""Fix rate over the corpus of broken files: the repair pipeline against a naive one-shot prompt.

In one run, on the same model:
  pipeline     POST /v1/fix on a daemon (parser hints, then model candidates, all verified),
  model only   the same pipeline with the parser's hints turned off (fix_parser_hints=false),
  naive        one prompt: the broken file, then "the same file with the error fixed", the
               model rewrites the whole file; counted fixed when the result parses and keeps
               the file's code.
For each it prints fixed / total, exact matches with tests/data/fixed, and for the pipeline the
time to the skeleton event (median) and whether any request went over its deadline.
Run: .venv/bin/python tests/bench/bench_fix.py
"""

from __future__ import annotations

import queue
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from daemon.checks.syntax import check_syntax
from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.engine.jobs import Budget, Finished
from daemon.engine.worker import Engine
from daemon.language import language_info
from daemon.protocol import DoneEvent, FixRequest, StageEvent
from daemon.repair.diagnosis import keeps_code
from daemon.settings import Settings, load_settings
from models.loaded import LoadedModel
from models.resolve import resolve_model

DATA = Path(__file__).resolve().parent.parent / "data"
LANGUAGES = {".py": "python", ".js": "javascript", ".ts": "typescript", ".go": "go", ".rs": "rust"}


@dataclass
class FixRun:
    fixed: int = 0
    exact: int = 0
    skeleton_median_ms: float = 0.0
    total_median_ms: float = 0.0
    total_max_ms: float = 0.0
    over_deadline: int = 0


def corpus() -> list[Path]:
    return sorted(p for p in (DATA / "broken").rglob("*") if p.suffix in LANGUAGES)


def expected(path: Path) -> str | None:
    twin = DATA / "fixed" / path.parent.name / path.name
    return twin.read_text() if twin.exists() else None


def run_pipeline(settings: Settings, files: list[Path]) -> FixRun:
    work = Path(tempfile.mkdtemp(prefix="assist-bench-fix-"))
    settings = settings.model_copy(update={"port": free_port(), "cache_path": work / "c.sqlite3"})
    process, _ = launch(settings, work / "daemon.log")
    run = FixRun()
    skeleton_ms: list[float] = []
    totals: list[float] = []
    try:
        with DaemonClient(settings.daemon_url) as client:
            for path in files:
                text = path.read_text()
                request = FixRequest(text=text, path=path.name, cache=False)
                done = None
                for event in client.fix(request):
                    if isinstance(event, StageEvent) and event.stage == "skeleton":
                        skeleton_ms.append(event.elapsed_ms)
                    if isinstance(event, DoneEvent):
                        done = event
                assert done is not None
                totals.append(done.timings.total_ms)
                if done.timings.total_ms > settings.fix_deadline_ms:
                    run.over_deadline += 1
                if done.changed and done.verified:
                    run.fixed += 1
                    run.exact += done.text == expected(path)
    finally:
        process.terminate()
        process.wait(timeout=30)
    run.skeleton_median_ms = statistics.median(skeleton_ms)
    run.total_median_ms = statistics.median(totals)
    run.total_max_ms = max(totals)
    return run


def run_naive(settings: Settings, files: list[Path]) -> FixRun:
    model = LoadedModel(
        resolve_model(settings.model_path, settings.cache_dir),
        n_ctx=settings.n_ctx,
        n_batch=settings.n_batch,
        n_threads=settings.n_threads,
        n_gpu_layers=settings.n_gpu_layers,
        prompt_format=None,
        fingerprint_memo=settings.cache_dir / "fingerprints.json",
    )
    engine = Engine(model)
    engine.start()
    run = FixRun()
    try:
        for path in files:
            language = LANGUAGES[path.suffix]
            info = language_info(language)
            comment = info.line_comment if info and info.line_comment else "#"
            text = path.read_text()
            prompt = (
                f"{comment} {path.name} (has a syntax error)\n{text}\n"
                f"{comment} {path.name}, the same file with the syntax error fixed:\n"
            )
            tokens = [model.bos_token or 0, *model.tokenize_text(prompt)]
            budget = Budget(
                max_tokens=len(model.tokenize_text(text)) + 64,
                deadline=time.perf_counter() + settings.fix_deadline_ms / 1000,
            )
            events: queue.Queue[object] = queue.Queue()
            engine.submit(tokens, budget, sink=events.put)
            while not isinstance(result := events.get(timeout=120), Finished):
                pass
            answer = result.text
            if not check_syntax(language, answer) and keeps_code(text, answer):
                run.fixed += 1
                run.exact += answer.strip() == (expected(path) or "").strip()
    finally:
        engine.close()
        model.close()
    return run


def main() -> int:
    files = corpus()
    settings = load_settings()
    pipeline = run_pipeline(settings, files)
    model_only = run_pipeline(settings.model_copy(update={"fix_parser_hints": False}), files)
    naive = run_naive(settings, files)
    total = len(files)
    print(f"fix rate over {total} broken files (Python, JavaScript, TypeScript, Go, Rust)")
    for name, run in (("pipeline", pipeline), ("model only", model_only), ("naive", naive)):
        rate = 100 * run.fixed / total
        print(f"  {name:<11} fixed {run.fixed:>2}/{total} ({rate:5.1f}%), exact {run.exact:>2}")
    print(f"  pipeline / naive fix rate  {pipeline.fixed / max(1, naive.fixed):.1f}x")
    for name, run in (("pipeline", pipeline), ("model only", model_only)):
        print(
            f"  {name:<11} skeleton median {run.skeleton_median_ms:.1f} ms, "
            f"total median {run.total_median_ms:.0f} ms, max {run.total_max_ms:.0f} ms, "
            f"over deadline {run.over_deadline}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
