"""Repairs that are what the author meant: the pipeline against a naive one-shot prompt.

Over a corpus of broken files (by default tests/data/broken, eight languages, some with
several errors; ``--corpus DIR`` for one written by tests/bench/typos.py: real code with one
real typo each), each repair is sorted into one of five outcomes by comparing it with the
file's twin in the corpus's fixed/ folder:
  intended    the result is the twin (the same syntax tree for Python; the same text, whitespace
              aside, elsewhere): what the author meant;
  different   it passes verification but is not the twin: a program that means something else;
  declined    nothing was offered (the file is left as it was);
  invalid     something was offered that fails the language's own check (the full compiler for
              Python, the grammar and the toolchain's checker elsewhere);
  clean       the file was called clean ("nothing to fix") though its language rejects it.
With a generated corpus the outcomes are also counted by language and by typo kind, and
"the language's own check" is the generator's: node, the TypeScript compiler, javac, gcc.
In one run, on the same model:
  pipeline    POST /v1/fix on a daemon (rules and layout, then the model; ranked by intent),
  model only  the same daemon with the rules turned off (fix_parser_hints=false),
  naive       one prompt: the broken file, then "the same file with the error fixed"; the model
              rewrites the whole file and its answer is taken as it is,
  before      (with --before DIR) the pipeline of an earlier checkout, e.g. one made with
              `git worktree add /tmp/before <rev>`, on the same corpus: both daemons run at
              once and are given each file in turn, so the time ratio is measured alike.
It also prints the time to the skeleton event, the total time of a fix (median and max), the
requests over their deadline, and the cache entries that fail verification (there must be none).
Run: .venv/bin/python tests/bench/bench_fix.py [--corpus DIR] [--before DIR] [--only python,go]
     [--json FILE]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import queue
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from daemon.checks.syntax import check_syntax
from daemon.checks.toolchain import tool_check
from daemon.checks.typescript import typescript_compiler
from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.engine.jobs import Budget, Finished
from daemon.engine.worker import Engine
from daemon.language import language_info
from daemon.protocol import DoneEvent, ErrorEvent, FixRequest, StageEvent
from daemon.settings import Settings, load_settings
from models.loaded import LoadedModel
from models.resolve import resolve_model
from tests.bench.typos import rejects

DATA = Path(__file__).resolve().parent.parent / "data"
LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".cpp": "cpp",
}
OUTCOMES = ("intended", "different", "declined", "invalid", "clean")


@dataclass(frozen=True)
class Corpus:
    """Broken files and their twins; for a generated corpus, each case's kind and origin."""

    root: Path
    cases: dict[str, dict[str, str]]  # file name (language/name) -> its cases.jsonl entry

    @classmethod
    def open(cls, root: Path) -> Corpus:
        cases = {}
        index = root / "cases.jsonl"
        if index.exists():
            for line in index.read_text().splitlines():
                case = json.loads(line)
                suffix = next(s for s, lang in LANGUAGES.items() if lang == case["language"])
                cases[f"{case['language']}/{case['name']}{suffix}"] = case
        return cls(root, cases)

    def files(self, only: set[str] | None = None) -> list[Path]:
        found = sorted(p for p in (self.root / "broken").rglob("*") if p.suffix in LANGUAGES)
        return [p for p in found if only is None or LANGUAGES[p.suffix] in only]

    def twin(self, path: Path) -> str:
        return (self.root / "fixed" / path.parent.name / path.name).read_text()

    def valid(self, path: Path, text: str) -> bool:
        """The language's own check of ``text`` (a repair of ``path``)."""
        language = LANGUAGES[path.suffix]
        case = self.cases.get(name_of(path))
        if case is None:
            return valid(language, text)
        return not check_syntax(language, text) and not rejects(language, text, case["source"])

    def outcome(self, path: Path, offered: str | None, called_clean: bool = False) -> str:
        language = LANGUAGES[path.suffix]
        if called_clean:
            return "clean"
        if offered is None:
            return "declined"
        if not self.valid(path, offered):
            return "invalid"
        return "intended" if same_program(language, offered, self.twin(path)) else "different"


@dataclass
class FixRun:
    outcomes: Counter[str] = field(default_factory=Counter)
    by_file: dict[str, str] = field(default_factory=dict)
    rules: Counter[str] = field(default_factory=Counter)  # which rule won, for intended fixes
    skeleton_ms: list[float] = field(default_factory=list)
    total_ms: list[float] = field(default_factory=list)
    over_deadline: int = 0
    invalid_cached: int = 0

    def record(self, path: Path, outcome: str) -> None:
        self.outcomes[outcome] += 1
        self.by_file[name_of(path)] = outcome


def name_of(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def valid(language: str, text: str) -> bool:
    """The language's own check: the full compiler for Python, grammar and toolchain else."""
    return not check_syntax(language, text) and tool_check(language, text).ok


def same_program(language: str, a: str, b: str) -> bool:
    if language == "python":
        try:
            return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
        except (SyntaxError, ValueError):
            return False
    return "".join(a.split()) == "".join(b.split())


class FixDaemon:
    """A daemon (of this checkout, or of ``code``) repairing files one at a time into a run."""

    def __init__(self, settings: Settings, code: Path | None = None) -> None:
        work = Path(tempfile.mkdtemp(prefix="assist-bench-fix-"))
        self.cache = work / "c.sqlite3"
        self.settings = settings.model_copy(update={"port": free_port(), "cache_path": self.cache})
        # The daemon runs that checkout's code, with the TypeScript compiler this one finds (a
        # worktree has no built editor extension, where the compiler is looked for last).
        env = {"PYTHONPATH": str(code) if code is not None else None}
        if "ASSIST_TYPESCRIPT" not in os.environ:
            env["ASSIST_TYPESCRIPT"] = typescript_compiler()
        saved = {name: os.environ.get(name) for name in env}
        os.environ.update({name: value for name, value in env.items() if value is not None})
        try:
            self.process, _ = launch(self.settings, work / "daemon.log")
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        self.client = DaemonClient(self.settings.daemon_url)
        self.run = FixRun()

    def repair(self, corpus: Corpus, path: Path) -> None:
        run = self.run
        text = path.read_text()
        request = FixRequest(text=text, path=path.name, language=LANGUAGES[path.suffix])
        done = None
        for event in self.client.fix(request):
            if isinstance(event, StageEvent) and event.stage == "skeleton":
                run.skeleton_ms.append(event.elapsed_ms)
            if isinstance(event, DoneEvent):
                done = event
            if isinstance(event, ErrorEvent):
                print(f"  {name_of(path)}: {event.code}: {event.message}")
        if done is None:
            run.record(path, "declined")
            return
        run.total_ms.append(done.timings.total_ms)
        if done.timings.total_ms > self.settings.fix_deadline_ms:
            run.over_deadline += 1
        offered = done.text if done.changed and not done.alternatives else None
        clean = not done.changed and bool(done.verified)
        result = corpus.outcome(path, offered, clean)
        run.record(path, result)
        if result == "intended" and done.repairs:
            run.rules.update(step.rule for step in done.repairs)

    def close(self) -> FixRun:
        self.client.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        self.run.invalid_cached = invalid_cache_entries(self.cache)
        return self.run


def run_pipeline(
    settings: Settings, corpus: Corpus, files: list[Path], code: Path | None = None
) -> FixRun:
    daemon = FixDaemon(settings, code)
    try:
        for path in files:
            daemon.repair(corpus, path)
    finally:
        run = daemon.close()
    return run


def run_beside(
    settings: Settings, corpus: Corpus, files: list[Path], before: Path
) -> tuple[FixRun, FixRun]:
    """This checkout's pipeline and an earlier one's, both running, given each file in turn
    (which goes first alternates), so that what else the machine does weighs on both alike."""
    daemons = [FixDaemon(settings), FixDaemon(settings, before)]
    try:
        for index, path in enumerate(files):
            for daemon in daemons[:: 1 if index % 2 == 0 else -1]:
                daemon.repair(corpus, path)
    finally:
        runs = [daemon.close() for daemon in daemons]
    return runs[0], runs[1]


def invalid_cache_entries(cache: Path) -> int:
    """Cached repairs that fail the language's own check (a fix must never be cached so)."""
    if not cache.exists():
        return 0
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT completion, language FROM code_cache").fetchall()
    return sum(1 for text, language in rows if language and not valid(language, text))


def run_naive(settings: Settings, corpus: Corpus, files: list[Path]) -> FixRun:
    model = LoadedModel(
        resolve_model(settings.model_path, settings.cache_dir, settings.model),
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
            began = time.perf_counter()
            engine.submit(tokens, budget, sink=events.put)
            while not isinstance(result := events.get(timeout=300), Finished):
                pass
            run.total_ms.append((time.perf_counter() - began) * 1000)
            answer = result.text.strip("\n") + "\n"
            run.record(path, corpus.outcome(path, answer if answer.strip() else None))
    finally:
        engine.close()
        model.close()
    return run


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def _row(name: str, outcomes: Counter[str]) -> str:
    files = sum(outcomes.values())
    share = 100 * outcomes["intended"] / max(1, files)
    return (
        f"  {name:<24} {files:>5} {outcomes['intended']:>4} ({share:5.1f}%) "
        f"{outcomes['different']:>9} {outcomes['declined']:>8} {outcomes['invalid']:>7} "
        f"{outcomes['clean']:>6}"
    )


_HEADER = (
    f"  {'':<24} {'files':>5} {'as meant':>14} {'different':>9} {'declined':>8} "
    f"{'invalid':>7} {'clean':>6}"
)


def print_table(corpus: Corpus, total: int, runs: dict[str, FixRun]) -> None:
    print(f"repairs over {total} broken files ({corpus.root})")
    print(_HEADER)
    for name, run in runs.items():
        print(_row(name, run.outcomes))
    for name, run in runs.items():
        if not run.skeleton_ms:
            continue
        print(
            f"  {name:<11} skeleton median {median(run.skeleton_ms):.1f} ms, total median "
            f"{median(run.total_ms):.1f} ms, max {max(run.total_ms):.0f} ms, over deadline "
            f"{run.over_deadline}, invalid cache entries {run.invalid_cached}"
        )
    if "before" in runs and runs["before"].total_ms:
        ratio = median(runs["pipeline"].total_ms) / max(1e-9, median(runs["before"].total_ms))
        print(f"  median total time, pipeline / before: {ratio:.2f}x")
    pipeline = runs["pipeline"]
    if corpus.cases:
        for facet in ("language", "kind"):
            print(f"the pipeline by {facet}")
            print(_HEADER)
            groups: dict[str, Counter[str]] = {}
            for file, result in pipeline.by_file.items():
                group = corpus.cases[file][facet] if file in corpus.cases else "?"
                groups.setdefault(group, Counter())[result] += 1
            for group in sorted(groups):
                print(_row(group, groups[group]))
    print(
        "  winning rules of intended repairs: "
        + ", ".join(f"{rule} {count}" for rule, count in pipeline.rules.most_common())
    )
    for kind in ("different", "declined", "invalid", "clean"):
        names = [f for f, o in pipeline.by_file.items() if o == kind]
        if names:
            print(f"  pipeline {kind}: {', '.join(names)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--corpus", type=Path, default=DATA, help="broken/ and fixed/ (tests/bench/typos.py)"
    )
    parser.add_argument("--before", type=Path, help="an earlier checkout to measure too")
    parser.add_argument("--only", help="languages, comma-separated")
    parser.add_argument("--no-naive", action="store_true", help="skip the naive prompt")
    parser.add_argument("--no-model-only", action="store_true", help="skip the rules-off run")
    parser.add_argument(
        "--naive-every", type=int, default=1, help="the naive prompt on every Nth file only"
    )
    parser.add_argument("--json", type=Path, help="also write every outcome to this file")
    args = parser.parse_args()
    corpus = Corpus.open(args.corpus)
    files = corpus.files(set(args.only.split(",")) if args.only else None)
    settings = load_settings()
    runs: dict[str, FixRun] = {}
    if args.before is None:
        runs["pipeline"] = run_pipeline(settings, corpus, files)
    else:
        before = args.before.resolve()
        runs["pipeline"], runs["before"] = run_beside(settings, corpus, files, before)
    print(f"pipeline: {dict(runs['pipeline'].outcomes)}", file=sys.stderr, flush=True)
    if not args.no_model_only:
        runs["model only"] = run_pipeline(
            settings.model_copy(update={"fix_parser_hints": False}), corpus, files
        )
    if not args.no_naive:
        runs["naive"] = run_naive(settings, corpus, files[:: max(1, args.naive_every)])
    print_table(corpus, len(files), runs)
    if args.json:
        # Not asdict(): it rebuilds a Counter from its (key, count) pairs, counting the pairs.
        dumped = {
            name: {f.name: _plain(getattr(run, f.name)) for f in fields(run)}
            for name, run in runs.items()
        }
        args.json.write_text(json.dumps(dumped, indent=1))
    return 0


def _plain(value: object) -> object:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else value


if __name__ == "__main__":
    raise SystemExit(main())
