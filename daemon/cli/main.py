"""The ``assist`` command line: parse the arguments, load the settings, run the command.
Each command's module is imported only when it runs; lines and columns are 1-based here."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from daemon import __version__
from daemon.cli.output import EXIT_OK, EXIT_USAGE, err, exit_after_broken_pipe
from daemon.loadtest.plan import DEFAULT_MIX, KINDS
from daemon.settings import SettingsError, add_setting_flags, settings_from_args

SERVE_SETTINGS = None  # every setting is a flag of `serve`
CLIENT_SETTINGS = [
    "url",
    "host",
    "port",
    "token",
    "ca",
    "cache_dir",
    "model",
    "model_path",
    "max_request_bytes",
]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assist", description="A local coding assistant backed by a llama.cpp model."
    )
    parser.add_argument("--version", action="version", version=f"assist {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    serve = sub.add_parser("serve", help="run the daemon in the foreground")
    add_setting_flags(serve, SERVE_SETTINGS)
    _name_tokens_file(serve)

    complete = sub.add_parser("complete", help="complete FILE at a position (1-based)")
    complete.add_argument("file", type=Path)
    complete.add_argument("--line", type=int, required=True, help="1-based line of the cursor")
    complete.add_argument("--column", type=int, required=True, help="1-based column (characters)")
    complete.add_argument("--json", action="store_true", help="print the NDJSON events")
    complete.add_argument("--max-tokens", dest="request_max_tokens", type=int, default=None)
    complete.add_argument("--no-cache", action="store_true", help="do not answer from the cache")
    complete.add_argument(
        "--no-context",
        action="store_true",
        help="do not send the signatures of what the file imports from its workspace",
    )
    complete.add_argument("--language", help="language id, when the file name does not tell")
    complete.add_argument("--workspace", type=Path, help="workspace folder (default: found)")
    add_setting_flags(complete, CLIENT_SETTINGS)

    fix = sub.add_parser("fix", help="repair the syntax errors of FILE with a verified fix")
    fix.add_argument("file", type=Path)
    fix.add_argument("--write", action="store_true", help="replace the file with the fix")
    fix.add_argument("--json", action="store_true", help="print the NDJSON events")
    fix.add_argument("--no-cache", action="store_true", help="do not answer from the cache")
    fix.add_argument("--language", help="language id, when the file name does not tell")
    fix.add_argument("--workspace", type=Path, help="workspace folder (default: found)")
    fix.add_argument("--candidates", type=int, help="model candidates to try at most")
    add_setting_flags(fix, CLIENT_SETTINGS)

    lsp = sub.add_parser("lsp", help="run the language server on stdio (for editors)")
    add_setting_flags(lsp, CLIENT_SETTINGS)

    stats = sub.add_parser("stats", help="latency, cache, acceptance and fix figures")
    stats.add_argument("--window", default="1h", help="how far back: 900, 15m, 1h, 7d")
    stats.add_argument("--by", default="language", choices=["language", "path", "user"])
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_setting_flags(stats, [*CLIENT_SETTINGS, "metrics_path"])

    tokens = sub.add_parser("tokens", help="per-user tokens for a shared daemon")
    tokens.add_argument("action", choices=["add", "remove", "list"])
    tokens.add_argument("name", nargs="?", help="the user (add, remove)")
    # --tokens FILE, as `assist serve --tokens FILE` reads it (the `tokens` setting).
    add_setting_flags(tokens, ["tokens"])
    tokens.add_argument("--file", dest="tokens", type=Path, help=argparse.SUPPRESS)  # the old name
    _name_tokens_file(tokens)

    doctor = sub.add_parser("doctor", help="check the installation, the model and the daemon")
    add_setting_flags(doctor, [*CLIENT_SETTINGS, "prompt_format", "cache_path"])

    models = sub.add_parser("models", help="the models assist knows by name, and their state")
    models.add_argument("--json", action="store_true", help="print the list as JSON")
    add_setting_flags(models, ["cache_dir", "model", "model_path"])

    cache = sub.add_parser("cache", help="result cache: stats or clear")
    cache.add_argument("action", choices=["stats", "clear"])
    add_setting_flags(cache, [*CLIENT_SETTINGS, "cache_path"])

    _add_loadtest(sub)

    bench = sub.add_parser("bench", help="measure latency, cache hits and daemon overhead")
    bench.add_argument("--repeat", type=int, default=5, help="runs per measurement")
    bench.add_argument("--completion-tokens", type=int, default=48, help="tokens per completion")
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_setting_flags(bench, ["model", "model_path", "n_ctx", "n_threads", "cache_dir"])
    return parser


def _add_loadtest(sub: Any) -> None:
    loadtest = sub.add_parser("loadtest", help="drive a daemon at a rate with a realistic mix")
    loadtest.add_argument("--rate", type=float, help="requests a second (default 10)")
    loadtest.add_argument("--duration", type=float, default=30.0, help="seconds of sending")
    mix = loadtest.add_mutually_exclusive_group()
    mix.add_argument("--mix", help=f"weights of the kinds (default {DEFAULT_MIX})")
    mix.add_argument("--only", choices=KINDS, help="one kind of request only")
    loadtest.add_argument(
        "--expected", type=float, metavar="QPS", help="run at 120%% of QPS; exit 1 unless held"
    )
    loadtest.add_argument(
        "--timeout", type=float, default=60.0, help="seconds after which a request counts as hung"
    )
    loadtest.add_argument("--users", type=int, help="virtual users (default: one per 4/s)")
    loadtest.add_argument("--places", type=int, default=16, help="places warmed for hits")
    loadtest.add_argument("--seed", type=int, default=1, help="draws the documents and places")
    loadtest.add_argument("--max-mean-ms", type=float, help="exit 1 unless the mean is within")
    loadtest.add_argument("--max-p99-ms", type=float, help="exit 1 unless the P99 is within")
    loadtest.add_argument("--json", action="store_true", help="print the figures as JSON")
    add_setting_flags(loadtest, CLIENT_SETTINGS)


def _name_tokens_file(parser: argparse.ArgumentParser) -> None:
    """Show the tokens file as ``--tokens FILE`` in help, the same in every command."""
    for action in parser._actions:
        if action.dest == "tokens":
            action.metavar = "FILE"


def _configure_logging(log_level: str) -> None:
    level = getattr(logging, log_level.upper(), logging.INFO)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("llama.cpp").setLevel(
        logging.DEBUG if level <= logging.DEBUG else logging.ERROR
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)


def _dispatch(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = settings_from_args(args)
    except SettingsError as exc:
        err(str(exc))
        return EXIT_USAGE
    _configure_logging(settings.log_level)

    if args.command == "lsp":
        from lsp.factory import main as lsp_main

        lsp_main(settings)
        return EXIT_OK
    if args.command == "serve":
        from daemon.cli.serve import run_serve

        return run_serve(settings)
    if args.command == "complete":
        from daemon.cli.complete import run_complete

        return run_complete(settings, args)
    if args.command == "fix":
        from daemon.cli.fix import run_fix

        return run_fix(settings, args)
    if args.command == "stats":
        from daemon.cli.stats import run_stats

        return run_stats(settings, args.window, args.by, args.json)
    if args.command == "tokens":
        if settings.tokens is None:
            err("name the tokens file with --tokens FILE (or the `tokens` setting)")
            return EXIT_USAGE
        from daemon.cli.tokens import run_tokens

        return run_tokens(args.action, args.name, settings.tokens)
    if args.command == "doctor":
        from daemon.cli.doctor import run_doctor

        return run_doctor(settings)
    if args.command == "models":
        from daemon.cli.models import run_models

        return run_models(settings, args.json)
    if args.command == "cache":
        from daemon.cli.cache import run_cache

        return run_cache(settings, args.action)
    if args.command == "loadtest":
        from daemon.cli.loadtest import run_loadtest

        return run_loadtest(settings, args)
    if args.command == "bench":
        from daemon.bench import run_bench

        return run_bench(
            settings, repeat=args.repeat, tokens=args.completion_tokens, as_json=args.json
        )
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    """The entry point of ``assist`` and ``python -m daemon.cli``; returns the exit status."""
    try:
        try:
            return _dispatch(argv)
        finally:
            # Inside the try: output still buffered meets a closed pipe here, not at exit.
            sys.stdout.flush()
    except BrokenPipeError:
        return exit_after_broken_pipe()


if __name__ == "__main__":
    sys.exit(main())
