"""What flash attention is worth on this machine: prompt reading and decoding, on and off.

Loads the configured model as the daemon does (a KV stream per slot), with ``flash_attn``
"off" and with the setting under test ("auto" by default) in turn, one engine at a time (two
contexts' threads would share the cores), and runs the same cold prompts through each, round
after round, so both see the same machine load.
Prints, as medians, the milliseconds to read each prompt and per generated token, and the
ratio off / on. Run: .venv/bin/python tests/bench/bench_flash.py [--rounds N] [--setting on]
"""

from __future__ import annotations

import argparse
import queue
import statistics
import time
import uuid
from pathlib import Path

from daemon.engine.jobs import Budget, Finished, PromptEvaluated
from daemon.engine.scheduler import Scheduler
from daemon.engine.worker import Engine
from daemon.http.assembly import local_engine
from daemon.settings import load_settings
from models.resolve import resolve_model

SOURCE = Path(__file__).resolve().parents[2] / "daemon" / "answers" / "completion.py"
GENERATED = 32


def engine_for(flash_attn: str) -> Engine:
    """The engine the daemon would start, with ``flash_attn`` as given."""
    settings = load_settings().model_copy(update={"flash_attn": flash_attn})
    resolved = resolve_model(settings.model_path, settings.cache_dir, settings.model)
    _, engine = local_engine(settings, resolved, Scheduler(4, 4))
    engine.start()
    return engine


def timed(engine: Engine, tokens: list[int]) -> tuple[float, float]:
    """Milliseconds to read ``tokens``, and per generated token after that."""
    events: queue.Queue = queue.Queue()
    began = time.perf_counter()
    engine.submit(tokens, Budget(GENERATED, began + 600), sink=events.put)
    read_at = None
    while True:
        event = events.get(timeout=600)
        if isinstance(event, PromptEvaluated):
            read_at = time.perf_counter()
        if isinstance(event, Finished):
            break
    assert read_at is not None and event.tokens > 0, event
    return 1000 * (read_at - began), 1000 * (time.perf_counter() - read_at) / event.tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--setting", choices=["auto", "on"], default="auto")
    parser.add_argument("--lengths", type=int, nargs="+", default=[300, 1200])
    args = parser.parse_args()
    settings = ("off", args.setting)
    text = SOURCE.read_text(encoding="utf-8")
    figures: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        # A new first line each round: no engine has read these prompts before.
        first = f"# {uuid.uuid4().hex}\n"
        for name in settings:
            engine = engine_for(name)
            try:
                tokens = engine.model.tokenize_text(first + text)
                for length in args.lengths:
                    figures.setdefault((name, length), []).append(timed(engine, tokens[:length]))
            finally:
                engine.close()
                engine.model.close()
    print(f"flash attention, {args.rounds} rounds, medians (prompt read cold; {GENERATED} tokens)")
    for length in args.lengths:
        read = {n: statistics.median(r for r, _ in figures[(n, length)]) for n in settings}
        decode = {n: statistics.median(d for _, d in figures[(n, length)]) for n in settings}
        on = args.setting
        print(
            f"  {length:5d}-token prompt: read off {read['off']:7.0f} ms, {on} {read[on]:7.0f} ms "
            f"({read['off'] / read[on]:.2f}x)   per token off {decode['off']:5.1f} ms, "
            f"{on} {decode[on]:5.1f} ms ({decode['off'] / decode[on]:.2f}x)"
        )


if __name__ == "__main__":
    main()
